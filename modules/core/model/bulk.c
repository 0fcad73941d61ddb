/* Bulk memory and tables; see bulk.h. */
#include "bulk.h"

#include <string.h>
#include <sys/mman.h>

#define HUGE_BYTES ((size_t)2 << 20)

typedef struct {
  uint8_t *base; /* the mapping, as mmap returned it */
  size_t map_len;
} Region;

struct WhBulk {
  GPtrArray *small; /* blocks from malloc */
  size_t small_bytes;
  GArray *regions;     /* Region */
  uint8_t *next, *end; /* free part of the latest region */
  size_t used, reserved;
};

WhBulk *wh_bulk_new(void)
{
  WhBulk *b = g_new0(WhBulk, 1);
  b->small = g_ptr_array_new_with_free_func(g_free);
  b->regions = g_array_new(FALSE, FALSE, sizeof(Region));
  return b;
}

void wh_bulk_free(WhBulk *b)
{
  if (b == NULL)
    return;
  g_ptr_array_unref(b->small);
  for (guint i = 0; i < b->regions->len; i++) {
    Region *r = &g_array_index(b->regions, Region, i);
    munmap(r->base, r->map_len);
  }
  g_array_unref(b->regions);
  g_free(b);
}

static inline size_t round_up(size_t x, size_t to)
{
  return (x + to - 1) / to * to;
}

/* Maps a region of at least `size` bytes, 2 MB-aligned; FALSE when the system has no
 * memory to map. */
static gboolean map_region(WhBulk *b, size_t size)
{
  size_t len = round_up(MAX(size, (size_t)WH_BULK_REGION), HUGE_BYTES);
  size_t map_len = len + HUGE_BYTES; /* room to align the start */
  void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return FALSE;
  uint8_t *base = p;
  uint8_t *start = (uint8_t *)round_up((uintptr_t)base, HUGE_BYTES);
#ifdef MADV_HUGEPAGE
  /* advice only: where THP is off or unsupported the region keeps 4 KB pages */
  (void)madvise(start, len, MADV_HUGEPAGE);
#endif
  Region r = {.base = base, .map_len = map_len};
  g_array_append_val(b->regions, r);
  b->next = start;
  b->end = start + len;
  b->reserved += len;
  return TRUE;
}

void *wh_huge_alloc0(size_t size)
{
  g_return_val_if_fail(size > 0, NULL);
  if (size < WH_BULK_SMALL)
    return g_aligned_alloc0(1, size, WH_BULK_ALIGN);
  size_t len = round_up(size, HUGE_BYTES);
  size_t map_len = len + HUGE_BYTES; /* room to align the start */
  void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    g_error("%s: failed to map %zu bytes", G_STRLOC, map_len); /* as g_malloc aborts */
  uint8_t *base = p;
  uint8_t *start = (uint8_t *)round_up((uintptr_t)base, HUGE_BYTES);
  /* keep only [start, start + len), so that wh_huge_free unmaps exactly that */
  if (start > base)
    munmap(base, (size_t)(start - base));
  if (base + map_len > start + len)
    munmap(start + len, (size_t)(base + map_len - (start + len)));
#ifdef MADV_HUGEPAGE
  (void)madvise(start, len, MADV_HUGEPAGE); /* advice only, as for regions */
#endif
  return start; /* fresh anonymous memory: already zero */
}

void wh_huge_free(void *p, size_t size)
{
  if (p == NULL)
    return;
  if (size < WH_BULK_SMALL)
    g_aligned_free(p);
  else
    munmap(p, round_up(size, HUGE_BYTES));
}

/* A zeroed, aligned block from malloc (kept for wh_bulk_free). */
static void *malloc_block(WhBulk *b, size_t size)
{
  void *p = g_malloc0(size + WH_BULK_ALIGN);
  g_ptr_array_add(b->small, p);
  return (void *)round_up((uintptr_t)p, WH_BULK_ALIGN);
}

void *wh_bulk_alloc0(WhBulk *b, size_t size)
{
  g_return_val_if_fail(b != NULL && size > 0, NULL);
  size = round_up(size, WH_BULK_ALIGN);
  b->used += size;
  if (b->small_bytes + size <= WH_BULK_SMALL) {
    b->small_bytes += size;
    return malloc_block(b, size);
  }
  /* out of address space: malloc, which aborts as GLib does when it fails too */
  if ((b->next == NULL || (size_t)(b->end - b->next) < size) && !map_region(b, size))
    return malloc_block(b, size);
  void *p = b->next; /* fresh anonymous memory: already zero */
  b->next += size;
  return p;
}

size_t wh_bulk_used(const WhBulk *b)
{
  return b->used;
}

size_t wh_bulk_reserved(const WhBulk *b)
{
  return b->small_bytes + b->reserved;
}

void wh_table_init(WhTable *t, size_t elem)
{
  g_return_if_fail(elem > 0 && elem <= G_MAXUINT32 / WH_TABLE_CHUNK);
  memset(t, 0, sizeof *t);
  t->elem = (uint32_t)elem;
}

void wh_table_clear(WhTable *t)
{
  size_t elem = t->elem;
  wh_bulk_free(t->bulk);
  g_free(t->chunk);
  wh_table_init(t, elem);
}

void wh_table_grow(WhTable *t, uint32_t len)
{
  if (len <= t->len)
    return;
  uint32_t need = (uint32_t)(((uint64_t)len + WH_TABLE_CHUNK - 1) / WH_TABLE_CHUNK);
  if (need > t->n_chunks) {
    if (t->bulk == NULL)
      t->bulk = wh_bulk_new();
    t->chunk = g_renew(uint8_t *, t->chunk, need);
    for (uint32_t c = t->n_chunks; c < need; c++)
      t->chunk[c] = wh_bulk_alloc0(t->bulk, (size_t)WH_TABLE_CHUNK * t->elem);
    t->n_chunks = need;
  }
  t->len = len;
}

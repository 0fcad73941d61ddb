/* Bulk memory for per-flow state that grows through a run and lives until its end:
 * the transport's flow records and Wormhole's per-flow tables.
 *
 * WhBulk hands out zeroed blocks that are freed all at once. Its first
 * WH_BULK_SMALL bytes come from malloc; later blocks are carved from regions of at
 * least WH_BULK_REGION bytes mapped on their own, aligned to 2 MB and, on Linux,
 * advised for transparent huge pages (MADV_HUGEPAGE, honoured when the kernel's THP
 * setting is "madvise" or "always"). A large run then faults its fresh per-flow state
 * in 2 MB at a time instead of 4 KB. Page faults are costly on virtual machines: a
 * fresh 4 KB page measured about 11 us on a 2-core VM, where 100 MB faulted in 0.29 s
 * in 4 KB pages and in 0.17 s in 2 MB pages, and MoE-8x7B's 116,736 flows took 37,000
 * faults. A small run (tests, dumbbells) never maps a region. Unused parts of a region
 * are never touched, so they cost address space only.
 *
 * WhTable is an array of fixed-size elements in chunks of WH_TABLE_CHUNK from a
 * WhBulk: it grows without copying, pointers to elements stay valid, and new elements
 * are zero. */
#ifndef WH_BULK_H
#define WH_BULK_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define WH_BULK_SMALL (1u << 20)  /* bytes from malloc before regions are mapped */
#define WH_BULK_REGION (8u << 20) /* smallest region */
#define WH_BULK_ALIGN 64u         /* alignment of every block */
#define WH_TABLE_CHUNK 1024u      /* elements per chunk of a WhTable */

typedef struct WhBulk WhBulk;

WhBulk *wh_bulk_new(void);
/* Frees every block. */
void wh_bulk_free(WhBulk *b);
/* A zeroed block of `size` bytes (> 0), WH_BULK_ALIGN-aligned, valid until
 * wh_bulk_free. (transfer none) */
void *wh_bulk_alloc0(WhBulk *b, size_t size);
/* Bytes handed out, and bytes of address space reserved for them (regions whole). */
size_t wh_bulk_used(const WhBulk *b);
size_t wh_bulk_reserved(const WhBulk *b);

/* A zeroed array of `size` bytes (> 0), WH_BULK_ALIGN-aligned, for a large array the
 * hot path reads at random (the network's ports, the calendar queue's buckets): from
 * WH_BULK_SMALL bytes up it is a mapping of its own, 2 MB-aligned and advised for huge
 * pages, below that from malloc. On a virtual machine a TLB miss costs a walk of two
 * page tables, and the hot arrays of a run with thousands of hosts span thousands of
 * 4 KB pages (docs/notes/2026-12-engine-scaling.md). Free it with wh_huge_free and the same size.
 * (transfer full) */
void *wh_huge_alloc0(size_t size);
void wh_huge_free(void *p, size_t size);

typedef struct {
  WhBulk *bulk;
  uint8_t **chunk;
  uint32_t n_chunks;
  uint32_t len;  /* elements */
  uint32_t elem; /* bytes per element */
} WhTable;

void wh_table_init(WhTable *t, size_t elem);
/* Frees every element; the table is empty (and initialized) again. */
void wh_table_clear(WhTable *t);
/* Grows the table to `len` elements (never shrinks); the new ones are zero. */
void wh_table_grow(WhTable *t, uint32_t len);

static inline void *wh_table_at(const WhTable *t, uint32_t i)
{
  return t->chunk[i / WH_TABLE_CHUNK] + (size_t)(i % WH_TABLE_CHUNK) * t->elem;
}

/* Blocks of one size that are taken and given back many times in a run (per-flow state
 * that lives while a flow is active): fresh blocks come zeroed from the WhBulk, given
 * back ones are kept on a list threaded through their first bytes and come back as they
 * were left, but for those bytes. No malloc or free per block; all go with the WhBulk. */
typedef struct {
  WhBulk *bulk;
  void *free;
  size_t size; /* >= sizeof (void *) */
} WhRecycler;

static inline void *wh_recycler_take(WhRecycler *r)
{
  void *p = r->free;
  if (p == NULL)
    return wh_bulk_alloc0(r->bulk, r->size);
  r->free = *(void **)p;
  return p;
}

static inline void wh_recycler_give(WhRecycler *r, void *p)
{
  if (p == NULL)
    return;
  *(void **)p = r->free;
  r->free = p;
}

/* uint32 arrays of varying lengths that live until the WhBulk goes (flows' routes and
 * port lists), carved one after another from blocks of at least WH_WORD_BLOCK words:
 * wh_words_room gives room for `n` words at the free end, wh_words_commit keeps the
 * first `used` of them (a caller may ask for the most it could use, then keep less). */
#define WH_WORD_BLOCK 16384u
typedef struct {
  WhBulk *bulk;
  uint32_t *free, *end; /* the latest block's free part */
} WhWordStore;

static inline uint32_t *wh_words_room(WhWordStore *s, uint32_t n)
{
  if ((size_t)(s->end - s->free) < n) {
    uint32_t len = MAX(n, WH_WORD_BLOCK);
    s->free = wh_bulk_alloc0(s->bulk, (size_t)len * sizeof(uint32_t));
    s->end = s->free + len;
  }
  return s->free;
}

static inline void wh_words_commit(WhWordStore *s, uint32_t used)
{
  s->free += used;
}

#endif

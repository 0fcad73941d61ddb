/* Variable-length integers for the memo database's compact byte forms (stored graphs,
 * phase outcomes, the file's entry heads): an unsigned value in 7-bit groups, low
 * group first, the high bit of a byte set when another follows (LEB128, 1 byte below
 * 128, at most 10 for 64 bits); a signed difference folded to unsigned first (zigzag:
 * 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...). The reader checks its bounds and refuses a
 * value of more than 64 bits or one not written in its shortest form, so a value has
 * one byte form and equal data give equal bytes. Header-only, cold paths. */
#ifndef WH_VARINT_H
#define WH_VARINT_H

#include <glib.h>
#include <stdint.h>

#define WH_VARINT_MAX_BYTES 10

/* Writes v at p (room for WH_VARINT_MAX_BYTES) and returns the byte after it. */
static inline uint8_t *wh_varint_write(uint8_t *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline void wh_varint_put(GByteArray *out, uint64_t v)
{
  uint8_t buf[WH_VARINT_MAX_BYTES];
  g_byte_array_append(out, buf, (guint)(wh_varint_write(buf, v) - buf));
}

/* Reads a value at *at (< end) and moves *at past it; FALSE (nothing moved) when the
 * bytes end first, the value needs more than 64 bits or has a needless zero group. */
static inline gboolean wh_varint_get(const uint8_t *p, gsize end, gsize *at, uint64_t *v)
{
  uint64_t x = 0;
  for (guint i = 0; i < WH_VARINT_MAX_BYTES && *at + i < end; i++) {
    uint8_t b = p[*at + i];
    if (i == WH_VARINT_MAX_BYTES - 1 && b > 1)
      return FALSE;
    x |= (uint64_t)(b & 0x7f) << (7 * i);
    if (b & 0x80)
      continue;
    if (i > 0 && b == 0)
      return FALSE;
    *at += i + 1;
    *v = x;
    return TRUE;
  }
  return FALSE;
}

/* wh_varint_get of a value that must fit 32 bits. */
static inline gboolean wh_varint_get32(const uint8_t *p, gsize end, gsize *at, uint32_t *v)
{
  uint64_t x;
  gsize from = *at;
  if (!wh_varint_get(p, end, at, &x))
    return FALSE;
  if (x > UINT32_MAX) {
    *at = from;
    return FALSE;
  }
  *v = (uint32_t)x;
  return TRUE;
}

/* The signed difference a - b (modulo 2^64) folded to unsigned, and back. */
static inline uint64_t wh_zigzag_diff(uint64_t a, uint64_t b)
{
  uint64_t d = a - b;
  return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

static inline uint64_t wh_zigzag_undiff(uint64_t z, uint64_t b)
{
  return b + ((z >> 1) ^ (uint64_t) - (int64_t)(z & 1));
}

#endif

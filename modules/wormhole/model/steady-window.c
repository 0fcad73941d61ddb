/* The block-summary rate window; see steady-window.h. */
#include "steady-window.h"

#include <math.h>

void wh_steady_window_shape(uint32_t l, uint32_t *blocks, uint32_t *block_size)
{
  uint32_t b = 1;
  for (uint32_t d = MIN(l, WH_WINDOW_MAX_BLOCKS); d >= 1; d--) {
    if (l % d == 0) {
      b = d;
      break;
    }
  }
  *blocks = b;
  *block_size = l / b;
}

void wh_steady_window_init(WhSteadyWindow *w, uint32_t l)
{
  g_return_if_fail(l >= 1);
  uint32_t blocks, block_size;
  wh_steady_window_shape(l, &blocks, &block_size);
  wh_steady_window_reset(w, blocks, block_size);
}

void wh_steady_window_reset(WhSteadyWindow *w, uint32_t blocks, uint32_t block_size)
{
  /* the blocks are read only once all of them were written */
  w->blocks = blocks;
  w->block_size = block_size;
  w->filled = w->head = w->cur_n = 0;
}

gboolean wh_steady_window_push(WhSteadyWindow *w, double v, double *dr, double *mean)
{
  if (w->cur_n == 0) {
    w->cur.min = w->cur.max = w->cur.sum = v;
  } else {
    w->cur.min = MIN(w->cur.min, v);
    w->cur.max = MAX(w->cur.max, v);
    w->cur.sum += v;
  }
  if (++w->cur_n < w->block_size)
    return FALSE;
  w->blk[w->head] = w->cur;
  w->head = (w->head + 1) % w->blocks;
  w->cur_n = 0;
  if (w->filled < w->blocks)
    w->filled++;
  if (w->filled < w->blocks)
    return FALSE;
  double lo = w->blk[0].min, hi = w->blk[0].max, sum = 0;
  for (uint32_t i = 0; i < w->blocks; i++) {
    lo = MIN(lo, w->blk[i].min);
    hi = MAX(hi, w->blk[i].max);
    sum += w->blk[i].sum;
  }
  double m = sum / ((double)w->blocks * w->block_size);
  *mean = m;
  *dr = m > 0 ? (hi - lo) / m : INFINITY;
  return TRUE;
}

double wh_steady_window_mean_spread(const WhSteadyWindow *w)
{
  double lo = w->blk[0].sum, hi = w->blk[0].sum, sum = 0;
  for (uint32_t i = 0; i < w->blocks; i++) {
    lo = MIN(lo, w->blk[i].sum);
    hi = MAX(hi, w->blk[i].sum);
    sum += w->blk[i].sum;
  }
  double m = sum / (double)w->blocks;
  return m > 0 ? (hi - lo) / m : INFINITY;
}

/* The steady-state window: the last l samples of one flow's rate, kept as block
 * summaries (min, max, sum per block) instead of the samples themselves, so its memory
 * is bounded by the block count, not by l. The window of l samples is cut into B
 * blocks of b = l / B samples, B the largest divisor of l not above
 * WH_WINDOW_MAX_BLOCKS; each time a block fills, the window over exactly the last l
 * samples is evaluated: dR = (max - min) / mean (the Wormhole paper's rate spread).
 * So a verdict is exact over its l samples and is renewed every b samples. Cost: O(1)
 * per sample plus O(B) per block; memory: 24 B per block. Engine-neutral: doubles in,
 * dR out. */
#ifndef WH_STEADY_WINDOW_H
#define WH_STEADY_WINDOW_H

#include <glib.h>
#include <stdint.h>

#define WH_WINDOW_MAX_BLOCKS 32u

typedef struct {
  double min, max, sum;
} WhWindowBlock;

typedef struct {
  uint32_t blocks;     /* B */
  uint32_t block_size; /* b */
  uint32_t filled;     /* complete blocks held (<= B) */
  uint32_t head;       /* next block slot to write */
  uint32_t cur_n;      /* samples in the block being filled */
  WhWindowBlock cur;
  WhWindowBlock blk[WH_WINDOW_MAX_BLOCKS];
} WhSteadyWindow;

/* The block layout for a window of `l` >= 1 samples. */
void wh_steady_window_shape(uint32_t l, uint32_t *blocks, uint32_t *block_size);

void wh_steady_window_init(WhSteadyWindow *w, uint32_t l);
/* The same with the layout wh_steady_window_shape gave, for a window used again. */
void wh_steady_window_reset(WhSteadyWindow *w, uint32_t blocks, uint32_t block_size);

/* Adds one sample. Returns TRUE when a block completed and the window holds l
 * samples: *dr is then the spread over the last l samples (+inf when their mean is
 * not positive) and *mean their mean. */
gboolean wh_steady_window_push(WhSteadyWindow *w, double v, double *dr, double *mean);

/* After a push that returned TRUE: the spread of the B block means over the last l
 * samples, (max - min) / mean (+inf when the mean is not positive): a rate that
 * oscillates within each block but whose mean does not drift has a small one. O(B). */
double wh_steady_window_mean_spread(const WhSteadyWindow *w);

#endif

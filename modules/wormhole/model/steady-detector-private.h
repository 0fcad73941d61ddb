/* The steady-state detector's state, shared by the detector (steady-detector.c) and
 * its report (detector-report.c); nothing else sees it. */
#ifndef WH_STEADY_DETECTOR_PRIVATE_H
#define WH_STEADY_DETECTOR_PRIVATE_H

#include "bulk.h"
#include "steady-detector.h"
#include "steady-window.h"

typedef struct {
  WhSteadyWindow *win; /* while active */
  uint32_t active_slot;
  uint8_t state; /* 0 unseen, 1 active, 2 ended */
  uint8_t steady, at_line, baseline, held;
  WhTime start, end;
  uint32_t samples, steady_samples;
  uint32_t evals, finite_evals;
  float dr_min, dr_max;
  double dr_sum;
  WhTime part_steady; /* time in a steady partition */
} DFlow;

typedef struct {
  uint32_t part_id;
  uint8_t kind;
  uint32_t flows;
  WhTime start, end;
  uint64_t bytes, events;
} Interval;

struct WhDetector {
  WhDetectorParams p;
  WhDetectorSource src;
  const WhEventCounts *counts;
  WhPartitions *pm;
  WhTable flows;      /* DFlow by id */
  WhRecycler windows; /* the active flows' WhSteadyWindow */
  uint32_t win_blocks, win_block_size;
  GArray *active; /* uint32 flow ids */
  GArray *intervals;
  WhDrStats dr;
  WhDetectorStats st;
  uint32_t *stamp; /* per port: last visit mark, to count each port once */
  uint32_t stamp_gen;
  uint32_t n_ports;
  WhTime now;
  /* partition-ticks by member count (the last bin: that many or more) */
  uint64_t size_ticks[WH_DETECTOR_SIZE_BINS];
  uint32_t max_live;
};

#endif

/* The files of a run (run-files.c). */
#ifndef WH_RUN_FILES_H
#define WH_RUN_FILES_H

#include <glib.h>
#include "run.h"

/* Per directed port that carried a frame or was paused (transfer full): links.csv,
 * port,node,peer_node,tier,rate_bps,frames,bytes,busy_ps,busy_fraction,pause_ps,
 * max_queue_bytes.
 * Frames and bytes count what arrived over the link (their sums are link_traversals and
 * link_bytes of the summary); busy_ps is the transmitter's busy time (PFC frames
 * included), busy_fraction that over the run's simulated time. */
char *wh_run_links_csv(const WhRun *run);

/* Writes DIR/summary.json, DIR/flows.csv (flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,
 * key) and DIR/links.csv (creating DIR), with Wormhole on
 * DIR/wormhole.json (partitions, steady intervals, per-flow steadiness), and with a sampler
 * DIR/rates.csv (period_start_ps,flow_id,sent_bps,delivered_bps; periods with
 * traffic) and DIR/queues.csv (period_end_ps,port,node,queue_bytes; non-empty). */
gboolean wh_run_write(const WhRun *run, const char *dir, GError **error);

#endif

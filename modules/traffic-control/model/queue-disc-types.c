/* Registered names of the stock queue discs, listed by `whsim list`. Switch ports use
 * wh::RedQueueDisc when wh::Switch::EcnEnabled is on and the CC marks ECN (its
 * thresholds come from the CC, e.g. wh::DcqcnCc::Kmin/Kmax/Pmax), else
 * wh::FifoQueueDisc; host NICs use wh::FifoQueueDisc. */
#include "registry.h"

const WhTypeInfo wh_fifo_queue_disc_type = {
    .name = "wh::FifoQueueDisc",
    .kind = "queue-disc",
    .help = "strict-priority FIFO per port (8 priorities, 0 first); no marking",
    .params = NULL,
};

const WhTypeInfo wh_red_queue_disc_type = {
    .name = "wh::RedQueueDisc",
    .kind = "queue-disc",
    .help = "strict-priority FIFO with RED-style ECN marking at dequeue (Kmin/Kmax/Pmax from "
            "the CC, scaled by port rate)",
    .params = NULL,
};

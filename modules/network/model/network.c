/* The network's build, routing and packet machinery; see network.h.
 *
 * Per packet per hop: one "arrival" event (the head of the link's in-flight FIFO),
 * plus one "transmitter free" event only while the egress queue is non-empty. A
 * transmitter that is idle when a packet is enqueued starts at once. */
#include "network.h"

#include "bulk.h"

#include <math.h>
#include <string.h>

#if GLIB_SIZEOF_VOID_P == 8
/* The port's cache lines (network.h): the hot path counts on them. */
G_STATIC_ASSERT(sizeof(WhPort) == 512);
G_STATIC_ASSERT(offsetof(WhPort, frames) == 64);
G_STATIC_ASSERT(offsetof(WhPort, pfc_state) < 128);
G_STATIC_ASSERT(offsetof(WhPort, rate_bps) == 128);
G_STATIC_ASSERT(offsetof(WhPort, qd) == 192);
G_STATIC_ASSERT(offsetof(WhQueueDisc, hot_band) + sizeof(WhQueueBand) == 64);
G_STATIC_ASSERT(sizeof(WhPacket) == 64);
G_STATIC_ASSERT(WH_PKT_INT_SLAB *(sizeof(WhPacket) + WH_MAX_INT_HOPS * sizeof(WhIntHop)) ==
                WH_PKT_INT_BLOCK);
#endif

#define PKT_SLAB 4096
#define WH_NET_MAX_ROUTING_BYTES (2048u << 20)

GQuark wh_network_error_quark(void)
{
  return g_quark_from_static_string("wh-network-error");
}

WhNet *wh_net_new(WhSim *sim, const WhNetParams *params)
{
  WhNet *net = g_new0(WhNet, 1);
  net->sim = sim;
  net->p = *params;
  net->build_nodes = g_array_new(FALSE, TRUE, sizeof(WhNode));
  net->build_ports = g_array_new(FALSE, TRUE, sizeof(WhPort));
  net->pkt_bulk = wh_bulk_new();
  return net;
}

void wh_net_free(WhNet *net)
{
  if (net == NULL)
    return;
  if (net->build_nodes) {
    for (guint i = 0; i < net->build_nodes->len; i++)
      g_free(g_array_index(net->build_nodes, WhNode, i).ports);
    g_array_free(net->build_nodes, TRUE);
  }
  if (net->build_ports)
    g_array_free(net->build_ports, TRUE);
  if (net->finalized) {
    for (uint32_t i = 0; i < net->n_ports; i++)
      wh_queue_disc_clear(&net->port[i].qd);
    for (uint32_t i = 0; i < net->n_nodes; i++)
      g_free(net->node[i].ports);
    g_free(net->node);
    g_free(net->buffer_used);
    if (net->sim->prefetch_base == (const char *)net->port)
      wh_sim_set_owner_prefetch(net->sim, NULL, 0, 0, 0);
    wh_huge_free(net->port, MAX(net->n_ports, 1) * sizeof(WhPort));
  }
  g_free(net->pfc_port);
  g_free(net->pfc_node);
  g_free(net->host_node);
  g_free(net->host_port);
  g_free(net->dist);
  if (net->router.free_data)
    net->router.free_data(net->router.data);
  wh_bulk_free(net->pkt_bulk);
  if (net->int_blocks) {
    for (guint i = 0; i < net->int_blocks->len; i++)
      wh_huge_free(net->int_blocks->pdata[i], WH_PKT_INT_BLOCK);
    g_ptr_array_free(net->int_blocks, TRUE);
  }
  g_free(net);
}

/* A slab of packets, each on a cache line of its own; with INT on, a block that holds
 * their records too (wh_packet_ints), aligned to its size (wh_huge_alloc0 aligns to
 * 2 MB). */
WhPacket *wh_net_packet_alloc(WhNet *net)
{
  size_t n = PKT_SLAB;
  WhPacket *slab;
  if (net->p.int_enabled) {
    n = WH_PKT_INT_SLAB;
    slab = wh_huge_alloc0(WH_PKT_INT_BLOCK);
    g_assert(((uintptr_t)slab & (WH_PKT_INT_BLOCK - 1)) == 0);
    if (net->int_blocks == NULL)
      net->int_blocks = g_ptr_array_new();
    g_ptr_array_add(net->int_blocks, slab);
  } else {
    slab = wh_bulk_alloc0(net->pkt_bulk, sizeof(WhPacket) * PKT_SLAB);
  }
  for (size_t i = 0; i < n - 1; i++)
    slab[i].next = &slab[i + 1];
  slab[n - 1].next = net->pkt_free;
  net->pkt_free = slab;
  return slab;
}

static uint32_t add_node(WhNet *net, gboolean is_switch)
{
  g_return_val_if_fail(!net->finalized, WH_NO_PORT);
  WhNode n = {0};
  n.is_switch = is_switch;
  n.index = is_switch ? net->n_switches++ : net->n_hosts++;
  n.leaf = WH_NO_PORT;
  n.fwd_delay = WH_TIME_MAX;
  g_array_append_val(net->build_nodes, n);
  return net->build_nodes->len - 1;
}

uint32_t wh_net_add_host(WhNet *net)
{
  return add_node(net, FALSE);
}

uint32_t wh_net_add_switch(WhNet *net)
{
  return add_node(net, TRUE);
}

WhTime wh_net_switch_delay(const WhNet *net, uint32_t node)
{
  const WhNode *n =
      net->finalized ? &net->node[node] : &g_array_index(net->build_nodes, WhNode, node);
  if (!n->is_switch)
    return 0;
  return n->fwd_delay != WH_TIME_MAX ? n->fwd_delay : net->p.switch_delay;
}

void wh_net_set_switch_delay(WhNet *net, uint32_t node, WhTime delay)
{
  g_return_if_fail(!net->finalized && node < net->build_nodes->len);
  g_array_index(net->build_nodes, WhNode, node).fwd_delay = delay;
}

static void node_add_port(WhNode *n, uint32_t port)
{
  n->ports = g_renew(uint32_t, n->ports, n->nports + 1);
  n->ports[n->nports++] = port;
}

gboolean wh_net_add_link(WhNet *net, uint32_t a, uint32_t b, uint64_t rate_bps, WhTime delay,
                         GError **error)
{
  g_return_val_if_fail(!net->finalized, FALSE);
  uint32_t n = net->build_nodes->len;
  if (a >= n || b >= n || a == b) {
    g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY,
                "link %u-%u: endpoints must be two distinct existing nodes", a, b);
    return FALSE;
  }
  if (rate_bps == 0) {
    g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY,
                "link %u-%u: rate must be greater than zero", a, b);
    return FALSE;
  }
  uint32_t pa = net->build_ports->len, pb = pa + 1;
  WhPort ports[2] = {0};
  ports[0].id = pa;
  ports[0].node = a;
  ports[0].peer_node = b;
  ports[0].peer = pb;
  ports[1].id = pb;
  ports[1].node = b;
  ports[1].peer_node = a;
  ports[1].peer = pa;
  for (int i = 0; i < 2; i++) {
    ports[i].rate_bps = rate_bps;
    ports[i].line_bps = rate_bps;
    ports[i].delay = delay;
    if (net->p.delay_jitter > 0) {
      WhRng r;
      wh_rng_init(&r, net->p.delay_jitter, ports[i].id);
      ports[i].delay += (wh_rng_next(&r) >> 63) * WH_PS;
    }
  }
  g_array_append_vals(net->build_ports, ports, 2);
  node_add_port(&g_array_index(net->build_nodes, WhNode, a), pa);
  node_add_port(&g_array_index(net->build_nodes, WhNode, b), pb);
  return TRUE;
}

uint64_t wh_net_estimate_bytes(const WhNetSize *s)
{
  /* 128-bit arithmetic: the parameters of a generator can describe absurd sizes */
  unsigned __int128 nodes = (unsigned __int128)s->hosts + s->switches, ports = 2 * s->links;
  unsigned __int128 b = nodes * (sizeof(WhNode) + sizeof(uint64_t) + sizeof(uint16_t) * s->leaves) +
                        ports * (sizeof(WhPort) + sizeof(uint32_t)) +
                        s->hosts * 2 * sizeof(uint32_t);
  return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

uint32_t wh_net_build_port_count(const WhNet *net)
{
  g_return_val_if_fail(net->build_ports != NULL, 0);
  return net->build_ports->len;
}

void wh_net_set_port_vc_bump(WhNet *net, uint32_t port, WhVcBump mode)
{
  g_return_if_fail(net->build_ports != NULL && port < net->build_ports->len);
  g_return_if_fail(mode <= WH_VC_BUMP_SAME_TIER);
  g_array_index(net->build_ports, WhPort, port).vc_bump = (uint8_t)mode;
}

void wh_net_set_link_tier(WhNet *net, uint32_t port, WhLinkTier tier)
{
  g_return_if_fail(net->build_ports != NULL && port < net->build_ports->len);
  g_return_if_fail(tier < WH_N_TIERS);
  WhPort *p = &g_array_index(net->build_ports, WhPort, port);
  p->tier = (uint8_t)tier;
  g_array_index(net->build_ports, WhPort, p->peer).tier = (uint8_t)tier;
}

const char *wh_net_tier_name(WhLinkTier tier)
{
  static const char *const names[WH_N_TIERS] = {"link",   "host", "nic",         "fabric", "local",
                                                "global", "edge", "aggregation", "core"};
  return tier < WH_N_TIERS ? names[tier] : "link";
}

WhTime wh_net_port_paused_time(const WhNet *net, const WhPort *port)
{
  return port->st.paused + (port->paused ? net->sim->now - port->pause_since : 0);
}

/* Hop distances from every node to every leaf switch over switch-to-switch links. */
static void compute_dist(WhNet *net)
{
  uint32_t L = net->n_leaves;
  net->dist = g_new(uint16_t, (size_t)net->n_nodes * L);
  memset(net->dist, 0xff, sizeof(uint16_t) * (size_t)net->n_nodes * L);
  uint32_t *queue = g_new(uint32_t, net->n_nodes);
  for (uint32_t s = 0; s < net->n_nodes; s++) {
    uint32_t leaf = net->node[s].leaf;
    if (leaf == WH_NO_PORT)
      continue;
    uint32_t qh = 0, qt = 0;
    net->dist[(size_t)s * L + leaf] = 0;
    queue[qt++] = s;
    while (qh < qt) {
      uint32_t u = queue[qh++];
      uint16_t du = net->dist[(size_t)u * L + leaf];
      const WhNode *nu = &net->node[u];
      for (uint32_t k = 0; k < nu->nports; k++) {
        uint32_t v = net->port[nu->ports[k]].peer_node;
        if (!net->node[v].is_switch || net->dist[(size_t)v * L + leaf] != 0xffff)
          continue;
        net->dist[(size_t)v * L + leaf] = (uint16_t)(du + 1);
        queue[qt++] = v;
      }
    }
  }
  g_free(queue);
}

static void init_port_queue(WhNet *net, WhPort *port)
{
  const WhNode *n = &net->node[port->node];
  port->at_switch = n->is_switch ? 1 : 0;
  gboolean red = n->is_switch && net->p.ecn;
  wh_queue_disc_init(&port->qd, red ? &wh_red_queue_disc_class : &wh_fifo_queue_disc_class,
                     port->id);
  if (red) {
    double scale = net->p.ecn_scale ? (double)port->rate_bps / (double)net->p.ecn_ref_rate : 1.0;
    wh_queue_disc_set_red(&port->qd, (uint64_t)((double)net->p.kmin * scale),
                          (uint64_t)((double)net->p.kmax * scale), net->p.pmax);
    wh_rng_init(&port->qd.rng, net->p.seed, 0x100000000ULL + port->id);
  }
  /* the far node's PFC books of this link's arrivals are this port's */
  if (net->node[port->peer_node].is_switch && net->p.pfc)
    *(net->p.pfc_dynamic ? &port->pfc_dyn_mask : &port->pfc_data_mask) =
        (uint8_t) ~(1u << WH_PRIO_CONTROL);
  port->delay += wh_net_switch_delay(net, port->peer_node);
}

/* Dynamic PFC: each switch port's headroom holds what its link still brings once the
 * port decides to PAUSE a priority: the frame it is sending, its PAUSE frame, the data
 * the peer sends while the PAUSE travels, the frame the peer is sending when it
 * arrives, the data already on the wire, and one frame more for the packet that
 * crossed the threshold: rate x (delay both ways, each with the receiving switch's
 * forwarding latency) + 3 frames + the PAUSE frame, for each priority. The shared pool
 * is what one headroom per port leaves of the buffer (as in the HPCC simulator: a
 * pause of several priorities of one port at once takes more). */
static gboolean init_dynamic_pfc(WhNet *net, GError **error)
{
  double alpha = net->p.pfc_alpha * 65536.0;
  net->pfc_alpha_q16 = alpha < 1.0 ? 1 : (uint64_t)(alpha + 0.5);
  net->pfc_port = g_new0(WhPortPfc, net->n_ports);
  net->pfc_node = g_new0(WhNodePfc, net->n_nodes);
  for (uint32_t i = 0; i < net->n_nodes; i++) {
    WhNode *n = &net->node[i];
    if (!n->is_switch)
      continue;
    double total = 0;
    for (uint32_t k = 0; k < n->nports; k++) {
      WhPort *p = &net->port[n->ports[k]];
      WhTime rtt = p->delay + net->port[p->peer].delay;
      double room = ceil((double)p->rate_bps * (double)rtt / 8e12) +
                    3.0 * (double)net->p.pfc_frame + WH_PFC_FRAME_BYTES;
      net->pfc_port[p->peer].headroom =
          room < (double)net->p.buffer_bytes ? (uint64_t)room : net->p.buffer_bytes;
      total += room;
    }
    if (total >= (double)net->p.buffer_bytes) {
      g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_BUFFER,
                  "wh::Switch::PfcThreshold=dynamic: switch %u's %u ports need %.0f B of PFC "
                  "headroom, which leaves nothing of its %" G_GUINT64_FORMAT
                  " B buffer (wh::Switch::BufferSize) to share",
                  n->index, n->nports, total, net->p.buffer_bytes);
      return FALSE;
    }
    net->pfc_node[i].shared_cap = net->p.buffer_bytes - (uint64_t)total;
  }
  return TRUE;
}

void wh_net_set_router(WhNet *net, const WhNetRouter *router)
{
  g_return_if_fail(!net->finalized);
  if (net->router.free_data)
    net->router.free_data(net->router.data);
  net->router = *router;
}

/* Salts the switches' ECMP hashes, indexes the hosts (their nodes and ports) and their
 * leaf switches, and checks that every host has one link, to a switch. */
static gboolean index_hosts(WhNet *net, GError **error)
{
  net->host_node = g_new(uint32_t, net->n_hosts);
  net->host_port = g_new0(uint32_t, net->n_hosts);
  for (uint32_t i = 0; i < net->n_nodes; i++) {
    WhNode *n = &net->node[i];
    if (n->is_switch) {
      n->salt = wh_mix64(net->p.seed * 0x9e3779b97f4a7c15ULL + i + 1);
      continue;
    }
    net->host_node[n->index] = i;
    if (n->nports != 1) {
      g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY,
                  "host %u has %u links; a host needs exactly one link, to a switch", n->index,
                  n->nports);
      return FALSE;
    }
    uint32_t sw = net->port[n->ports[0]].peer_node;
    if (!net->node[sw].is_switch) {
      g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY,
                  "host %u is linked to another host; hosts must connect to a switch", n->index);
      return FALSE;
    }
    if (net->node[sw].leaf == WH_NO_PORT)
      net->node[sw].leaf = net->n_leaves++;
    net->host_port[n->index] = n->ports[0];
    net->port[n->ports[0]].host = n->index;
  }
  return TRUE;
}

gboolean wh_net_finalize(WhNet *net, GError **error)
{
  g_return_val_if_fail(!net->finalized, FALSE);
  net->n_nodes = net->build_nodes->len;
  net->n_ports = net->build_ports->len;
  if (net->n_hosts == 0) {
    g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY, "the topology has no hosts");
    return FALSE;
  }
  net->node = (WhNode *)g_array_free(net->build_nodes, FALSE);
  net->buffer_used = g_new0(uint64_t, net->n_nodes);
  net->port = wh_huge_alloc0(MAX(net->n_ports, 1) * sizeof(WhPort));
  memcpy(net->port, net->build_ports->data, (size_t)net->n_ports * sizeof(WhPort));
  g_array_free(net->build_ports, TRUE);
  net->build_nodes = net->build_ports = NULL;
  net->finalized = TRUE;
  wh_sim_set_owner_prefetch(net->sim, net->port, sizeof(WhPort), net->n_ports,
                            offsetof(WhPort, fly_head));
  if (!index_hosts(net, error))
    return FALSE;
  if (net->p.pfc && net->p.buffer_bytes > UINT32_MAX) {
    g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_BUFFER,
                "wh::Switch::BufferSize=%" G_GUINT64_FORMAT
                " B: with PFC a switch buffer holds less than 4 GiB (its ingress counts are "
                "32-bit)",
                net->p.buffer_bytes);
    return FALSE;
  }
  for (uint32_t i = 0; i < net->n_ports; i++)
    init_port_queue(net, &net->port[i]);
  if (net->p.pfc && net->p.pfc_dynamic && !init_dynamic_pfc(net, error))
    return FALSE;
  if (net->router.route)
    return TRUE;
  uint64_t table = (uint64_t)net->n_nodes * net->n_leaves * sizeof(uint16_t);
  if (table > WH_NET_MAX_ROUTING_BYTES) {
    g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY,
                "the topology is too large for shortest-path routing tables: %u nodes x %u "
                "leaf switches need %" G_GUINT64_FORMAT " MB (limit %u MB)",
                net->n_nodes, net->n_leaves, table >> 20, WH_NET_MAX_ROUTING_BYTES >> 20);
    return FALSE;
  }
  compute_dist(net);
  /* Connected: every switch reaches every leaf. */
  for (uint32_t i = 0; i < net->n_nodes; i++) {
    if (!net->node[i].is_switch)
      continue;
    for (uint32_t l = 0; l < net->n_leaves; l++) {
      if (net->dist[(size_t)i * net->n_leaves + l] == 0xffff) {
        g_set_error(error, WH_NETWORK_ERROR, WH_NETWORK_ERROR_TOPOLOGY,
                    "the topology is disconnected: switch %u cannot reach every host",
                    net->node[i].index);
        return FALSE;
      }
    }
  }
  return TRUE;
}

void wh_net_set_data_priority(WhNet *net, unsigned prio)
{
  g_return_if_fail(net->finalized && prio < WH_NPRIO);
  for (uint32_t i = 0; i < net->n_ports; i++)
    wh_queue_disc_set_hot(&net->port[i].qd, prio);
}

void wh_net_set_transport(WhNet *net, const WhNetTransport *tp, void *ctx)
{
  net->tp = *tp;
  net->tp_ctx = ctx;
}

uint32_t wh_net_host_port(const WhNet *net, uint32_t host)
{
  return net->host_port[host];
}

uint32_t wh_net_route(const WhNet *net, uint32_t src, uint32_t dst, uint64_t tuple_hash,
                      uint32_t *out, uint32_t out_cap)
{
  g_return_val_if_fail(net->finalized && src < net->n_hosts && dst < net->n_hosts, 0);
  if (net->router.route)
    return net->router.route(net, net->router.data, src, dst, tuple_hash, out, out_cap);
  uint32_t n = 0;
  uint32_t first = wh_net_host_port(net, src);
  uint32_t last = net->port[wh_net_host_port(net, dst)].peer;
  uint32_t leaf_node = net->port[last].node;
  uint32_t leaf = net->node[leaf_node].leaf;
  uint32_t L = net->n_leaves;
  if (out_cap < 1)
    return 0;
  out[n++] = first;
  uint32_t cur = net->port[first].peer_node;
  while (cur != leaf_node) {
    const WhNode *nd = &net->node[cur];
    uint16_t d = net->dist[(size_t)cur * L + leaf];
    uint32_t cnt = 0;
    for (uint32_t k = 0; k < nd->nports; k++) {
      uint32_t v = net->port[nd->ports[k]].peer_node;
      if (net->node[v].is_switch && net->dist[(size_t)v * L + leaf] + 1 == d)
        cnt++;
    }
    g_assert(cnt > 0);
    uint32_t pick = (uint32_t)(wh_mix64(tuple_hash ^ nd->salt) % cnt);
    uint32_t chosen = WH_NO_PORT;
    for (uint32_t k = 0; k < nd->nports; k++) {
      uint32_t v = net->port[nd->ports[k]].peer_node;
      if (net->node[v].is_switch && net->dist[(size_t)v * L + leaf] + 1 == d && pick-- == 0) {
        chosen = nd->ports[k];
        break;
      }
    }
    if (n >= out_cap)
      return 0;
    out[n++] = chosen;
    cur = net->port[chosen].peer_node;
  }
  if (n >= out_cap)
    return 0;
  out[n++] = last;
  return n;
}

static void port_try_send(WhNet *net, WhPort *port);

static void port_tx_event(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  WhNet *net = ctx;
  WhPort *port = &net->port[arg];
  port->tx_event = NULL;
  port_try_send(net, port);
}

/* Makes sure the transmitter looks again no later than `at`. */
static void ensure_tx_event(WhNet *net, WhPort *port, WhTime at)
{
  if (port->tx_event) {
    if (port->tx_event->time <= at)
      return;
    wh_sim_cancel(net->sim, port->tx_event);
  }
  port->tx_event = wh_sim_schedule_at(net->sim, at, port_tx_event, net, port->id, port->id);
}

static void handle_arrival(WhNet *net, WhPort *link, WhPacket *pkt);

static void port_fly_event(WhSim *sim, void *ctx, uint64_t arg)
{
  WhNet *net = ctx;
  WhPort *port = &net->port[arg];
  port->fly_event = NULL;
  WhPacket *pkt;
  while ((pkt = port->fly_head) != NULL && pkt->arrive <= sim->now) {
    port->fly_head = pkt->next;
    if (port->fly_head == NULL)
      port->fly_tail = NULL;
    pkt->next = NULL;
    handle_arrival(net, port, pkt);
  }
  if (port->fly_head && port->fly_event == NULL)
    port->fly_event =
        wh_sim_schedule_at(sim, port->fly_head->arrive, port_fly_event, net, port->id, port->id);
}

static void transmit(WhNet *net, WhPort *port, WhPacket *pkt)
{
  WhTime now = net->sim->now;
  WhTime tx = wh_time_tx(pkt->size, port->rate_bps);
  port->busy_until = now + tx;
  port->st.busy += tx;
  port->tx_bytes += pkt->size;
  pkt->arrive = port->busy_until + port->delay;
  pkt->next = NULL;
  if (port->fly_tail)
    port->fly_tail->next = pkt;
  else
    port->fly_head = pkt;
  port->fly_tail = pkt;
  if (port->fly_event == NULL)
    port->fly_event =
        wh_sim_schedule_at(net->sim, pkt->arrive, port_fly_event, net, port->id, port->id);
}

static WhPacket *make_pfc_frame(WhNet *net, WhPort *port)
{
  unsigned p = (unsigned)__builtin_ctz(port->pfc_pending);
  port->pfc_pending &= (uint8_t) ~(1u << p);
  WhPacket *f = wh_net_packet_new(net);
  f->flow = NULL;
  f->route = NULL;
  f->seq = 0;
  f->payload = 0;
  f->hop = f->nhops = 0;
  f->ecn = 0;
  f->n_int = 0;
  f->type = WH_PKT_PFC;
  f->prio = (uint8_t)p;
  f->size = WH_PFC_FRAME_BYTES;
  f->pfc_pause = (net->port[port->peer].pfc_state >> p) & 1u;
  if (f->pfc_pause)
    net->c.pfc_pauses++;
  else
    net->c.pfc_resumes++;
  wh_queue_disc_report_pfc(&port->qd, p, f->pfc_pause);
  return f;
}

/* The far node of `link` changes its PFC state for the priority of `bit` (pause or
 * resume what arrives over the link): its port on the link sends the frame. */
static void pfc_toggle(WhNet *net, WhPort *link, uint8_t bit)
{
  WhPort *back = &net->port[link->peer];
  link->pfc_state ^= bit;
  back->pfc_pending ^= bit;
  ensure_tx_event(net, back, MAX(net->sim->now, back->busy_until));
}

/* Dynamic PFC: the bytes one ingress port and priority may hold in the shared pool,
 * pfc_alpha x what is free of it. */
static inline uint64_t pfc_threshold(const WhNet *net, const WhNodePfc *sw)
{
  uint64_t a = net->pfc_alpha_q16;
  uint64_t free = sw->shared_cap > sw->shared_used ? sw->shared_cap - sw->shared_used : 0;
  return (free >> 16) * a + (((free & 0xffff) * a) >> 16);
}

/* Dynamic PFC: whether an ingress port and priority holding headroom bytes or pool
 * bytes should be paused (`pausing`) or stay paused. */
static inline gboolean dynamic_pfc_over(const WhNet *net, const WhNodePfc *sw, const WhPort *in,
                                        const WhPortPfc *pp, uint8_t q, gboolean pausing)
{
  if (pp->hdrm_bytes[q] > 0)
    return TRUE;
  uint64_t shared = in->ingress_bytes[q], t = pfc_threshold(net, sw);
  if (pausing)
    return shared > 0 && shared >= t;
  return shared > 0 && (shared >= t || t - shared < net->p.pfc_resume_offset);
}

/* Dynamic PFC, a packet of `size` arrives from `in` in priority `q`: it goes to the
 * shared pool while the port and priority's pool bytes stay within the threshold, else
 * to the port's headroom; FALSE (drop) when neither holds it. Pauses the priority when
 * it holds headroom bytes or its pool bytes reach the threshold. */
static G_NO_INLINE gboolean dynamic_pfc_admit(WhNet *net, uint32_t node, WhPort *in, uint8_t q,
                                              uint64_t size)
{
  WhNodePfc *sw = &net->pfc_node[node];
  WhPortPfc *pp = &net->pfc_port[in->id];
  uint64_t shared = in->ingress_bytes[q] - pp->hdrm_bytes[q];
  if (shared + size > pfc_threshold(net, sw)) {
    if (pp->hdrm_bytes[q] + size > pp->headroom)
      return FALSE;
    pp->hdrm_bytes[q] += size;
  } else {
    sw->shared_used += size;
  }
  in->ingress_bytes[q] += size;
  uint8_t bit = (uint8_t)(1u << q);
  if (!(in->pfc_state & bit) && dynamic_pfc_over(net, sw, in, pp, q, TRUE))
    pfc_toggle(net, in, bit);
  return TRUE;
}

/* Dynamic PFC, a packet of `size` from `in` in priority `q` leaves: headroom bytes go
 * first, then pool bytes; resumes the priority once it holds no headroom bytes and its
 * pool bytes are PfcResumeOffset below the threshold, or none are left. */
static G_NO_INLINE void dynamic_pfc_release(WhNet *net, uint32_t node, WhPort *in, uint8_t q,
                                            uint64_t size)
{
  WhNodePfc *sw = &net->pfc_node[node];
  WhPortPfc *pp = &net->pfc_port[in->id];
  uint64_t from_hdrm = MIN(pp->hdrm_bytes[q], size);
  pp->hdrm_bytes[q] -= from_hdrm;
  sw->shared_used -= size - from_hdrm;
  in->ingress_bytes[q] -= size;
  uint8_t bit = (uint8_t)(1u << q);
  if ((in->pfc_state & bit) && !dynamic_pfc_over(net, sw, in, pp, q, FALSE))
    pfc_toggle(net, in, bit);
}

/* A packet leaves a switch's buffer (at dequeue): release buffer and PFC counts. */
static void switch_release(WhNet *net, uint32_t node, WhPacket *pkt)
{
  net->buffer_used[node] -= pkt->size;
  WhPort *in = &net->port[pkt->route[pkt->hop - 1]];
  uint8_t bit = (uint8_t)(1u << pkt->in_prio);
  if (!(in->pfc_data_mask & bit)) {
    if (G_UNLIKELY(in->pfc_dyn_mask & bit))
      dynamic_pfc_release(net, node, in, pkt->in_prio, pkt->size);
    return;
  }
  in->ingress_bytes[pkt->in_prio] -= pkt->size;
  if ((in->pfc_state & bit) && in->ingress_bytes[pkt->in_prio] <= net->p.pfc_xon)
    pfc_toggle(net, in, bit);
}

static void port_try_send(WhNet *net, WhPort *port)
{
  WhTime now = net->sim->now;
  if (G_UNLIKELY(port->frozen))
    return;
  if (port->busy_until > now) {
    ensure_tx_event(net, port, port->busy_until);
    return;
  }
  WhPacket *pkt = NULL;
  if (port->pfc_pending) {
    pkt = make_pfc_frame(net, port);
  } else {
    pkt = wh_queue_disc_dequeue(&port->qd, port->paused);
    if (pkt) {
      if (port->at_switch) {
        switch_release(net, port->node, pkt);
        if (net->p.int_enabled && pkt->type == WH_PKT_DATA && pkt->n_int < WH_MAX_INT_HOPS)
          wh_packet_ints(pkt)[pkt->n_int++] =
              (WhIntHop){now, port->tx_bytes + pkt->size, (uint32_t)port->qd.total_bytes, port->id};
      }
    } else if (!port->at_switch) {
      WhTime next = WH_TIME_MAX;
      pkt = net->tp.pull(net->tp_ctx, port->host, port->paused, &next);
      if (pkt == NULL) {
        if (next != WH_TIME_MAX)
          ensure_tx_event(net, port, next);
        return;
      }
      wh_queue_disc_report_passthrough(&port->qd, pkt);
    }
  }
  if (pkt == NULL)
    return;
  transmit(net, port, pkt);
  if (port->pfc_pending || (port->qd.nonempty & (uint8_t)~port->paused))
    ensure_tx_event(net, port, port->busy_until);
  else if (!port->at_switch) {
    WhTime ready = net->tp.ready_at(net->tp_ctx, port->host);
    if (ready != WH_TIME_MAX)
      ensure_tx_event(net, port, MAX(ready, port->busy_until));
  }
}

void wh_net_host_kick(WhNet *net, uint32_t host, WhTime at)
{
  WhPort *port = &net->port[wh_net_host_port(net, host)];
  WhTime now = net->sim->now;
  if (at <= now && port->busy_until <= now && port->tx_event == NULL) {
    port_try_send(net, port);
    return;
  }
  ensure_tx_event(net, port, MAX(at, MAX(now, port->busy_until)));
}

void wh_net_host_send(WhNet *net, uint32_t host, WhPacket *pkt)
{
  WhPort *port = &net->port[wh_net_host_port(net, host)];
  wh_queue_disc_enqueue(&port->qd, pkt);
  port_try_send(net, port);
}

static void drop(WhNet *net, WhPort *out, WhPacket *pkt)
{
  net->c.drops++;
  net->c.drop_bytes += pkt->size;
  if (pkt->type == WH_PKT_DATA)
    net->c.drop_data_payload += pkt->payload;
  wh_queue_disc_report_drop(&out->qd, pkt);
  wh_net_packet_free(net, pkt);
}

/* `in` is the port of the link the packet came over: its line holds the ingress counts. */
static void switch_enqueue(WhNet *net, uint32_t node, WhPort *in, WhPort *out, WhPacket *pkt)
{
  uint64_t *used = &net->buffer_used[node];
  if (*used + pkt->size > net->p.buffer_bytes) {
    drop(net, out, pkt);
    return;
  }
  uint8_t bit = (uint8_t)(1u << pkt->in_prio);
  if (in->pfc_data_mask & bit) {
    in->ingress_bytes[pkt->in_prio] += pkt->size;
    if (!(in->pfc_state & bit) && in->ingress_bytes[pkt->in_prio] > net->p.pfc_xoff)
      pfc_toggle(net, in, bit);
  } else if (G_UNLIKELY(in->pfc_dyn_mask & bit) &&
             !dynamic_pfc_admit(net, node, in, pkt->in_prio, pkt->size)) {
    drop(net, out, pkt);
    return;
  }
  *used += pkt->size;
  wh_queue_disc_enqueue(&out->qd, pkt);
  port_try_send(net, out);
}

static void handle_arrival(WhNet *net, WhPort *link, WhPacket *pkt)
{
  if (G_UNLIKELY(pkt->type == WH_PKT_PFC)) {
    WhPort *target = &net->port[link->peer];
    uint8_t bit = (uint8_t)(1u << pkt->prio);
    if (pkt->pfc_pause) {
      if (target->paused == 0)
        target->pause_since = net->sim->now;
      target->paused |= bit;
    } else {
      target->paused &= (uint8_t)~bit;
      if (target->paused == 0)
        target->st.paused += net->sim->now - target->pause_since;
      ensure_tx_event(net, target, MAX(net->sim->now, target->busy_until));
    }
    wh_net_packet_free(net, pkt);
    return;
  }
  net->c.link_traversals++;
  link->frames++;
  link->bytes += pkt->size;
  net->last_move = net->sim->now;
  if (++pkt->hop == pkt->nhops) {
    net->c.packets_delivered++;
    net->tp.deliver(net->tp_ctx, pkt);
    return;
  }
  /* ingress accounting (PFC) in the priority the packet crossed the link with; its
   * next egress queue and link in the next virtual channel after a bumping link */
  pkt->in_prio = pkt->prio;
  if (G_UNLIKELY(link->vc_bump) && pkt->type == WH_PKT_DATA && pkt->prio > 1 &&
      (link->vc_bump == WH_VC_BUMP_ALWAYS || net->port[pkt->route[pkt->hop]].tier == link->tier))
    pkt->prio--;
  switch_enqueue(net, link->peer_node, link, &net->port[pkt->route[pkt->hop]], pkt);
}

static void fill_deadlock(WhNet *net, WhTime still_since)
{
  WhNetDeadlock *d = &net->deadlock;
  d->buffered_bytes = 0;
  d->switches = 0;
  d->paused_ports = 0;
  for (uint32_t i = 0; i < net->n_nodes; i++) {
    if (net->node[i].is_switch && net->buffer_used[i]) {
      d->buffered_bytes += net->buffer_used[i];
      d->switches++;
    }
  }
  for (uint32_t i = 0; i < net->n_ports; i++)
    d->paused_ports += net->port[i].paused != 0;
  d->at = net->sim->now;
  d->still_since = still_since;
}

/* The deadlock state: switches hold packets, some port is paused, and no port can
 * move anything: none is transmitting or has a frame on its wire, and every packet
 * queued at a port waits on a paused priority. (A frozen port, held by an
 * accelerator, counts as able to move.) */
static gboolean stuck(WhNet *net)
{
  WhTime now = net->sim->now;
  uint32_t paused = 0;
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    if (p->busy_until > now || p->fly_head || p->pfc_pending || p->frozen ||
        (p->qd.nonempty & (uint8_t)~p->paused))
      return FALSE;
    paused += p->paused != 0;
  }
  return paused > 0;
}

static WhTime watchdog(WhSim *sim, void *ctx)
{
  WhNet *net = ctx;
  if (sim->now - net->last_move >= net->p.deadlock_timeout && stuck(net)) {
    fill_deadlock(net, net->last_move);
    if (net->deadlock.buffered_bytes > 0) {
      net->deadlock.detected = TRUE;
      wh_sim_stop(sim);
      return WH_TIME_MAX;
    }
  }
  return sim->now + MAX(net->p.deadlock_timeout / 2, 1);
}

void wh_net_start_watchdog(WhNet *net)
{
  if (net->p.deadlock_timeout == 0 || !net->p.pfc)
    return;
  net->last_move = net->sim->now;
  wh_sim_add_monitor(net->sim, watchdog, net, net->sim->now + MAX(net->p.deadlock_timeout / 2, 1));
}

gboolean wh_net_check_stuck(WhNet *net)
{
  if (net->deadlock.detected)
    return TRUE;
  if (!net->p.pfc || wh_sim_pending(net->sim) > 0 || !stuck(net))
    return FALSE;
  fill_deadlock(net, net->last_move);
  net->deadlock.detected = net->deadlock.buffered_bytes > 0;
  return net->deadlock.detected;
}

void wh_net_add_hooks(WhNet *net, const WhQueueHooks *hooks, void *data)
{
  for (uint32_t i = 0; i < net->n_ports; i++)
    wh_queue_disc_add_hooks(&net->port[i].qd, hooks, data);
}

void wh_net_remove_hooks(WhNet *net, const WhQueueHooks *hooks, void *data)
{
  for (uint32_t i = 0; i < net->n_ports; i++)
    wh_queue_disc_remove_hooks(&net->port[i].qd, hooks, data);
}

uint64_t wh_net_link_bytes(const WhNet *net)
{
  uint64_t b = 0;
  for (uint32_t i = 0; i < net->n_ports; i++)
    b += net->port[i].bytes;
  return b;
}

uint64_t wh_net_ecn_marks(const WhNet *net)
{
  uint64_t m = 0;
  for (uint32_t i = 0; i < net->n_ports; i++)
    m += net->port[i].qd.marks;
  return m;
}

void wh_net_freeze_port(WhNet *net, uint32_t port, gboolean frozen)
{
  WhPort *p = &net->port[port];
  p->frozen = frozen ? 1 : 0;
  if (!frozen)
    ensure_tx_event(net, p, MAX(net->sim->now, p->busy_until));
}

static void shift_packet(WhPacket *pkt, WhTime shift)
{
  if (pkt->sent)
    pkt->sent += shift;
  for (unsigned k = 0; k < pkt->n_int; k++)
    wh_packet_ints(pkt)[k].ts += shift;
}

void wh_net_shift_port(WhNet *net, uint32_t port, WhTime shift)
{
  wh_net_shift_port_from(net, port, net->sim->now, shift);
}

void wh_net_shift_port_from(WhNet *net, uint32_t port, WhTime from, WhTime shift)
{
  /* a fast-forward moves traffic: the watchdog counts it as movement */
  net->last_move = MAX(net->last_move, net->sim->now);
  WhPort *p = &net->port[port];
  if (p->busy_until > from)
    p->busy_until += shift;
  for (WhPacket *pkt = p->fly_head; pkt; pkt = pkt->next) {
    pkt->arrive += shift;
    shift_packet(pkt, shift);
  }
  for (int q = 0; q < WH_NPRIO; q++)
    for (WhPacket *pkt = wh_queue_disc_band(&p->qd, q)->head; pkt; pkt = pkt->next)
      shift_packet(pkt, shift);
}

void wh_net_foreach_packet_at(WhNet *net, uint32_t port, void (*fn)(WhPacket *pkt, void *data),
                              void *data)
{
  WhPort *p = &net->port[port];
  for (int q = 0; q < WH_NPRIO; q++)
    for (WhPacket *pkt = wh_queue_disc_band(&p->qd, q)->head; pkt; pkt = pkt->next)
      fn(pkt, data);
  for (WhPacket *pkt = p->fly_head; pkt; pkt = pkt->next)
    fn(pkt, data);
}

void wh_net_foreach_packet(WhNet *net, void (*fn)(WhPacket *pkt, void *data), void *data)
{
  for (uint32_t i = 0; i < net->n_ports; i++)
    wh_net_foreach_packet_at(net, i, fn, data);
}

static int of_flow(const WhPacket *pkt, const void *flow)
{
  return pkt->flow == flow;
}

static void reclaim(WhNet *net, WhPacket *pkt)
{
  net->c.reclaimed++;
  if (pkt->type == WH_PKT_DATA)
    net->c.reclaimed_data_payload += pkt->payload;
  wh_net_packet_free(net, pkt);
}

uint32_t wh_net_reclaim_if(WhNet *net, uint32_t port, int (*pred)(const WhPacket *, const void *),
                           const void *data)
{
  g_return_val_if_fail(pred != NULL && port < net->n_ports, 0);
  WhPort *p = &net->port[port];
  uint32_t n = 0;
  WhPacket *next;
  for (WhPacket *pkt = wh_queue_disc_remove_if(&p->qd, pred, data); pkt; pkt = next, n++) {
    next = pkt->next;
    if (p->at_switch)
      switch_release(net, p->node, pkt);
    reclaim(net, pkt);
  }
  const WhPacket *head = p->fly_head;
  for (WhPacket *pkt = wh_packet_list_take_if(&p->fly_head, &p->fly_tail, pred, data); pkt;
       pkt = next, n++) {
    next = pkt->next;
    reclaim(net, pkt);
  }
  if (p->fly_head != head && p->fly_event) {
    wh_sim_cancel(net->sim, p->fly_event);
    p->fly_event = NULL;
    if (p->fly_head)
      p->fly_event =
          wh_sim_schedule_at(net->sim, p->fly_head->arrive, port_fly_event, net, p->id, p->id);
  }
  return n;
}

uint32_t wh_net_reclaim_flow_at(WhNet *net, uint32_t port, const struct WhFlow *flow)
{
  g_return_val_if_fail(flow != NULL, 0);
  return wh_net_reclaim_if(net, port, of_flow, flow);
}

/* ns3::WhCScheduler, an ns-3 Scheduler that forwards every operation to a C
 * WhSchedulerClass; see wh-ns3-scheduler.h. An ns-3 event (EventImpl*, key {ts, uid,
 * context}) becomes a WhEvent from a chunked pool (no malloc per event): time = ts
 * (picoseconds, as wh-ns3 switches ns-3 to ps resolution), seq = uid, ctx = the
 * EventImpl*, arg = the context, fn = NULL, owner = WH_OWNER_NONE. Remove(ev) finds
 * the WhEvent by uid in an open-addressing table (linear probing, backward-shift
 * deletion, at most 3/4 full), so every operation is one indirect call into the C class
 * plus an O(1) probe; memory is 72 bytes per pooled WhEvent and 16 bytes per table
 * slot. The class is chosen per process through a static (the last
 * wh_ns3_use_c_scheduler), the counts live in statics so they outlive ns-3's
 * teardown, and the shim references no particular scheduler class. With Class=wormhole
 * in a process that already ran ns-3 (wh-ns3-private.h), the monitor is not attached:
 * the simulation runs as stock, with a line on stderr and a report that says why. The
 * conformance check at the end drives a WhCScheduler and a MapScheduler side by side. */
#include "wh-ns3-scheduler.h"
#include "wh-ns3-monitor.h"
#include "wh-ns3-private.h"

#include <ns3/core-module.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <unordered_map>
#include <vector>

namespace
{

/* The class the next WhCScheduler runs on, and the counts of the current one. */
const WhSchedulerClass *g_klass;
WhNs3SchedulerCounts g_counts;
bool g_selected;
const void *g_active; /* the WhCScheduler being counted, or null once destroyed */
bool g_checking;      /* a conformance check builds the WhCScheduler */

/* uid -> WhEvent*, open addressing; a null event marks an empty slot. */
class UidTable
{
public:
  UidTable()
  {
    Resize(1024);
  }

  void Put(uint32_t uid, WhEvent *ev)
  {
    if ((m_n + 1) * 4 > m_slots.size() * 3)
      Resize(m_slots.size() * 2);
    size_t i = Home(uid);
    while (m_slots[i].ev)
      i = (i + 1) & m_mask;
    m_slots[i] = {uid, ev};
    m_n++;
  }

  WhEvent *Get(uint32_t uid) const
  {
    for (size_t i = Home(uid); m_slots[i].ev; i = (i + 1) & m_mask) {
      if (m_slots[i].uid == uid)
        return m_slots[i].ev;
    }
    return nullptr;
  }

  /* Removes uid (false if absent) and closes the gap by shifting back later entries of
   * the probe run that may move (those whose home is not cyclically in (hole, j]). */
  bool Erase(uint32_t uid)
  {
    size_t hole = Home(uid);
    for (;; hole = (hole + 1) & m_mask) {
      if (!m_slots[hole].ev)
        return false;
      if (m_slots[hole].uid == uid)
        break;
    }
    for (size_t j = (hole + 1) & m_mask; m_slots[j].ev; j = (j + 1) & m_mask) {
      size_t home = Home(m_slots[j].uid);
      if (((j - home) & m_mask) >= ((j - hole) & m_mask)) {
        m_slots[hole] = m_slots[j];
        hole = j;
      }
    }
    m_slots[hole] = {0, nullptr};
    m_n--;
    return true;
  }

private:
  struct Slot {
    uint32_t uid;
    WhEvent *ev;
  };

  size_t Home(uint32_t uid) const
  {
    return (size_t)((uint32_t)(uid * 2654435769u) >> m_shift); /* Fibonacci hashing */
  }

  void Resize(size_t cap)
  {
    std::vector<Slot> old;
    old.swap(m_slots);
    m_slots.assign(cap, Slot{0, nullptr});
    m_mask = cap - 1;
    m_shift = 32;
    for (size_t c = cap; c > 1; c >>= 1)
      m_shift--;
    m_n = 0;
    for (const Slot &s : old) {
      if (s.ev)
        Put(s.uid, s.ev);
    }
  }

  std::vector<Slot> m_slots;
  size_t m_mask = 0, m_n = 0;
  unsigned m_shift = 32;
};

} // namespace

namespace ns3
{

class WhCScheduler : public Scheduler
{
public:
  static TypeId GetTypeId();

  WhCScheduler(); /* runs on the class its Class attribute names, counted */
  WhCScheduler(const WhSchedulerClass *klass, bool counted);
  ~WhCScheduler() override;

  void Insert(const Event &ev) override;
  bool IsEmpty() const override;
  Event PeekNext() const override;
  Event RemoveNext() override;
  void Remove(const Event &ev) override;

  uint64_t Size() const
  {
    return m_klass->size(m_sched);
  }

protected:
  void NotifyConstructionCompleted() override;

private:
  static constexpr size_t kChunk = 4096;

  void Start(const WhSchedulerClass *klass, bool counted);

  WhEvent *Alloc();
  void Release(WhEvent *ev);
  static Event ToNs3(const WhEvent *ev);

  const WhSchedulerClass *m_klass = nullptr;
  WhScheduler *m_sched = nullptr;
  bool m_counted = false;
  std::string m_class; /* the Class attribute */
  /* Class=wormhole: the steady-state monitor, its parameters and report path */
  double m_theta = 0.05;
  uint32_t m_window = 2000;
  Time m_period, m_idleWindow;
  std::string m_report, m_quantity;
  WhNs3Monitor *m_monitor = nullptr;
  std::vector<std::unique_ptr<WhEvent[]>> m_chunks;
  WhEvent *m_free = nullptr; /* free list through WhEvent::next */
  UidTable m_byUid;
  uint64_t m_live = 0;
};

NS_OBJECT_ENSURE_REGISTERED(WhCScheduler);

/* The values of the Class attribute: a C scheduler class each; wormhole is the heap
 * with the steady-state monitor (wh-ns3-monitor.h) riding on it. */
struct WhNs3ClassName {
  const char *name;
  const WhSchedulerClass *klass;
  bool monitor;
};
static const WhNs3ClassName kClasses[] = {
    {"heap", &wh_heap_scheduler_class, false},
    {"calendar", &wh_calendar_scheduler_class, false},
    {"wormhole", &wh_heap_scheduler_class, true},
};

static const WhNs3ClassName *LookupClass(const std::string &name)
{
  for (const WhNs3ClassName &c : kClasses) {
    if (name == c.name)
      return &c;
  }
  return nullptr;
}

/* A string attribute with a fixed set of values, refused where it is set (an
 * ObjectFactory, Config::SetDefault, --ns3::WhCScheduler::Class=...) with the valid
 * values on stderr before ns-3's own "Invalid value for attribute set" error.
 * `allow_empty`: "" is valid too (Class: the class of wh_ns3_use_c_scheduler). */
class WhChoiceChecker : public StringChecker
{
public:
  WhChoiceChecker(const char *attribute, const char *const *names, bool allow_empty)
      : m_attribute(attribute), m_allowEmpty(allow_empty)
  {
    for (const char *const *n = names; *n; n++)
      m_names.push_back(*n);
  }

  bool Valid(const std::string &v) const
  {
    return (m_allowEmpty && v.empty()) ||
           std::find(m_names.begin(), m_names.end(), v) != m_names.end();
  }

  std::string List() const
  {
    std::string all;
    for (const std::string &n : m_names)
      all += (all.empty() ? "" : ", ") + n;
    return all;
  }

  bool Check(const AttributeValue &value) const override
  {
    const StringValue *s = dynamic_cast<const StringValue *>(&value);
    if (s == nullptr)
      return false;
    if (Valid(s->Get()))
      return true;
    std::cerr << "ns3::WhCScheduler: " << m_attribute << " \"" << s->Get() << "\" is not one of "
              << List() << std::endl;
    return false;
  }
  std::string GetValueTypeName() const override
  {
    return "ns3::StringValue";
  }
  bool HasUnderlyingTypeInformation() const override
  {
    return true;
  }
  std::string GetUnderlyingTypeInformation() const override
  {
    return "one of " + List();
  }
  Ptr<AttributeValue> Create() const override
  {
    return ns3::Create<StringValue>();
  }
  bool Copy(const AttributeValue &source, AttributeValue &destination) const override
  {
    const StringValue *src = dynamic_cast<const StringValue *>(&source);
    StringValue *dst = dynamic_cast<StringValue *>(&destination);
    if (src == nullptr || dst == nullptr)
      return false;
    *dst = *src;
    return true;
  }

private:
  std::string m_attribute;
  std::vector<std::string> m_names;
  bool m_allowEmpty;
};

static const char *const kClassNames[] = {"heap", "calendar", "wormhole", nullptr};

TypeId WhCScheduler::GetTypeId()
{
  static TypeId tid =
      TypeId("ns3::WhCScheduler")
          .SetParent<Scheduler>()
          .SetGroupName("Core")
          .AddConstructor<WhCScheduler>()
          .AddAttribute(
              "Class",
              "The C scheduler class: heap (4-ary heap), calendar (calendar "
              "queue) or wormhole (the heap plus the steady-state monitor, which "
              "writes the Report when the simulation is destroyed); empty: the "
              "class chosen through wh_ns3_use_c_scheduler, else heap",
              StringValue(""), MakeStringAccessor(&WhCScheduler::m_class),
              Ptr<const AttributeChecker>(ns3::Create<WhChoiceChecker>("Class", kClassNames, true)))
          .AddAttribute("Report", "Class=wormhole: the JSON report's path (empty: none)",
                        StringValue("wormhole-ns3.json"),
                        MakeStringAccessor(&WhCScheduler::m_report), MakeStringChecker())
          .AddAttribute("Quantity",
                        "Class=wormhole: what is sampled per flow: cwnd-rtt (the sender "
                        "socket's congestion window over its smoothed RTT, from its "
                        "CongestionWindow and RTT trace sources; UDP: delivered) or "
                        "delivered (payload that reached the receiver per period)",
                        StringValue("cwnd-rtt"), MakeStringAccessor(&WhCScheduler::m_quantity),
                        Ptr<const AttributeChecker>(ns3::Create<WhChoiceChecker>(
                            "Quantity", wh_ns3_monitor_quantities, false)))
          .AddAttribute("Theta",
                        "Class=wormhole: a flow is steady when its rate spread "
                        "(max - min) / mean over Window samples is below this, in [0, 1)",
                        DoubleValue(0.05), MakeDoubleAccessor(&WhCScheduler::m_theta),
                        MakeDoubleChecker<double>(0.0, 0.999999))
          .AddAttribute("Window", "Class=wormhole: samples per steady-state window, l >= 2",
                        UintegerValue(2000), MakeUintegerAccessor(&WhCScheduler::m_window),
                        MakeUintegerChecker<uint32_t>(2, 1000000))
          .AddAttribute("SamplePeriod", "Class=wormhole: the rate sampling period tau",
                        TimeValue(MicroSeconds(1)), MakeTimeAccessor(&WhCScheduler::m_period),
                        MakeTimeChecker(PicoSeconds(1)))
          .AddAttribute("IdleWindow",
                        "Class=wormhole: how long a partition must be unmarked and unchanged, "
                        "every flow at line rate, to count as steady by the idle rule (0: "
                        "no idle rule)",
                        TimeValue(MicroSeconds(10)), MakeTimeAccessor(&WhCScheduler::m_idleWindow),
                        MakeTimeChecker(Time(0)));
  return tid;
}

/* NS_GLOBAL_VALUE="SchedulerType=ns3::WhCScheduler" (ns-3's environment selection, for
 * an unchanged program with this library preloaded): ns-3 reads it when its core
 * library loads, before this library has registered the type, and silently keeps
 * MapScheduler for a name it does not know yet. Now that the name is known (the
 * registration above runs first, in this file's order), bind it again. */
static struct WhRebindSchedulerType {
  WhRebindSchedulerType()
  {
    const char *env = std::getenv("NS_GLOBAL_VALUE");
    if (env == nullptr)
      return;
    std::string all(env), key = "SchedulerType=";
    for (size_t at = 0; at <= all.size();) {
      size_t end = all.find(';', at);
      std::string item = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (item.compare(0, key.size(), key) == 0 &&
          item.compare(key.size(), std::string::npos, "ns3::WhCScheduler") == 0)
        GlobalValue::Bind("SchedulerType", StringValue(item.substr(key.size())));
      if (end == std::string::npos)
        break;
      at = end + 1;
    }
  }
} g_rebind;

WhCScheduler::WhCScheduler() : m_counted(true) {}

WhCScheduler::WhCScheduler(const WhSchedulerClass *klass, bool counted)
{
  Start(klass, counted);
}

/* Class is known once the attributes are set: creates the C scheduler (and, for
 * wormhole, the monitor). */
void WhCScheduler::NotifyConstructionCompleted()
{
  Scheduler::NotifyConstructionCompleted();
  if (m_sched)
    return;
  const WhNs3ClassName *c = m_class.empty() ? nullptr : LookupClass(m_class);
  /* outside this API's simulations (it checks its own in wh_ns3_sim_new), ns-3 builds
   * the scheduler when it creates the simulator, which every Packet constructor does
   * before it takes a uid: packets now are an earlier simulation's */
  int phase = wh_ns3_sim_phase();
  std::string why;
  if (c && c->monitor && !g_checking && phase != WH_NS3_PHASE_BUILT && phase != WH_NS3_PHASE_RAN &&
      wh_ns3_prior_use(false, &why)) {
    wh_ns3_monitor_refused(m_report, why);
  } else if (c && c->monitor) {
    WhNs3MonitorParams p = {m_theta, m_window, m_period, m_idleWindow, m_quantity == "cwnd-rtt"};
    m_monitor = wh_ns3_monitor_new(&p, m_report);
  }
  Start(c ? c->klass : g_klass ? g_klass : &wh_heap_scheduler_class, m_counted);
}

void WhCScheduler::Start(const WhSchedulerClass *klass, bool counted)
{
  m_klass = klass;
  m_sched = m_klass->create();
  if (counted) {
    g_counts = WhNs3SchedulerCounts{};
    g_active = this;
    g_selected = true;
  }
}

WhCScheduler::~WhCScheduler()
{
  if (g_active == this) {
    g_counts.pending = Size();
    g_active = nullptr;
  }
  if (m_monitor)
    wh_ns3_monitor_free(m_monitor);
  if (m_sched)
    m_klass->destroy(m_sched);
}

WhEvent *WhCScheduler::Alloc()
{
  if (m_free == nullptr) {
    m_chunks.emplace_back(new WhEvent[kChunk]);
    WhEvent *chunk = m_chunks.back().get();
    for (size_t i = 0; i < kChunk; i++) {
      chunk[i].next = m_free;
      m_free = &chunk[i];
    }
  }
  WhEvent *ev = m_free;
  m_free = ev->next;
  return ev;
}

void WhCScheduler::Release(WhEvent *ev)
{
  ev->ctx = nullptr;
  ev->next = m_free;
  m_free = ev;
}

Scheduler::Event WhCScheduler::ToNs3(const WhEvent *ev)
{
  Event out;
  out.impl = static_cast<EventImpl *>(ev->ctx);
  out.key.m_ts = ev->time;
  out.key.m_uid = (uint32_t)ev->seq;
  out.key.m_context = (uint32_t)ev->arg;
  return out;
}

void WhCScheduler::Insert(const Event &in)
{
  WhEvent *ev = Alloc();
  ev->time = in.key.m_ts;
  ev->seq = in.key.m_uid;
  ev->fn = nullptr;
  ev->ctx = in.impl;
  ev->arg = in.key.m_context;
  ev->owner = WH_OWNER_NONE;
  ev->pos = 0;
  ev->next = ev->prev = nullptr;
  m_byUid.Put(in.key.m_uid, ev);
  m_klass->insert(m_sched, ev);
  m_live++;
  if (g_active == this) {
    g_counts.inserts++;
    if (m_live > g_counts.max_size)
      g_counts.max_size = m_live;
  }
}

bool WhCScheduler::IsEmpty() const
{
  return m_klass->size(m_sched) == 0;
}

Scheduler::Event WhCScheduler::PeekNext() const
{
  if (g_active == this)
    g_counts.peeks++;
  WhEvent *ev = m_klass->peek(m_sched);
  NS_ABORT_MSG_IF(ev == nullptr, "PeekNext on an empty ns3::WhCScheduler");
  return ToNs3(ev);
}

Scheduler::Event WhCScheduler::RemoveNext()
{
  if (g_active == this)
    g_counts.pops++;
  if (m_monitor && g_active == this) /* the simulation's scheduler, not a check's */
    wh_ns3_monitor_before_pop(m_monitor, m_klass->peek(m_sched));
  WhEvent *ev = m_klass->pop(m_sched);
  NS_ABORT_MSG_IF(ev == nullptr, "RemoveNext on an empty ns3::WhCScheduler");
  Event out = ToNs3(ev);
  NS_ABORT_MSG_IF(!m_byUid.Erase(out.key.m_uid),
                  "the C scheduler popped an event it does not hold (uid " << out.key.m_uid << ")");
  m_live--;
  Release(ev);
  return out;
}

void WhCScheduler::Remove(const Event &in)
{
  if (g_active == this)
    g_counts.removes++;
  WhEvent *ev = m_byUid.Get(in.key.m_uid);
  NS_ABORT_MSG_IF(ev == nullptr || ev->time != in.key.m_ts || ev->ctx != in.impl,
                  "Remove of an event not in ns3::WhCScheduler (uid " << in.key.m_uid << ")");
  m_klass->remove(m_sched, ev);
  m_byUid.Erase(in.key.m_uid);
  m_live--;
  Release(ev);
}

} // namespace ns3

using namespace ns3;

/* Where the (only) simulation is: set up by wh_ns3_sim_new (which switches ns-3 to
 * picosecond resolution, ns-3's default being ns) and not run yet (no event executed,
 * time still 0). wh-ns3.cc keeps the simulation's real state private; these are the
 * public signs of it. */
static bool sim_accepts_scheduler(void)
{
  return wh_ns3_sim_phase() == WH_NS3_PHASE_BUILT && Simulator::GetEventCount() == 0;
}

static bool class_complete(const WhSchedulerClass *klass)
{
  return klass && klass->create && klass->destroy && klass->insert && klass->peek && klass->pop &&
         klass->remove && klass->size;
}

extern "C" int wh_ns3_use_c_scheduler(const WhSchedulerClass *klass)
{
  if (!class_complete(klass))
    return WH_NS3_EINVAL;
  if (!sim_accepts_scheduler())
    return WH_NS3_ESTATE;
  g_klass = klass;
  g_selected = true;
  ObjectFactory factory;
  factory.SetTypeId(WhCScheduler::GetTypeId());
  Simulator::SetScheduler(factory);
  return WH_NS3_OK;
}

extern "C" int wh_ns3_c_scheduler_counts(WhNs3SchedulerCounts *out)
{
  if (out == nullptr)
    return WH_NS3_EINVAL;
  if (!g_selected)
    return WH_NS3_ESTATE;
  *out = g_counts;
  if (g_active)
    out->pending = static_cast<const WhCScheduler *>(g_active)->Size();
  return WH_NS3_OK;
}

static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static bool same_event(const Scheduler::Event &a, const Scheduler::Event &b)
{
  return a.impl == b.impl && a.key.m_ts == b.key.m_ts && a.key.m_uid == b.key.m_uid &&
         a.key.m_context == b.key.m_context;
}

/* Drives `c` and a MapScheduler side by side; see wh_ns3_c_scheduler_check. */
static int check_against_map(Ptr<WhCScheduler> c, uint32_t ops, uint64_t seed)
{
  Ptr<MapScheduler> m = CreateObject<MapScheduler>();
  /* the pending events, to remove random ones; index by uid for O(1) bookkeeping */
  std::vector<Scheduler::Event> pending;
  std::unordered_map<uint32_t, size_t> where;
  auto forget = [&](uint32_t uid) {
    size_t i = where[uid];
    where.erase(uid);
    if (i + 1 != pending.size()) {
      pending[i] = pending.back();
      where[pending[i].key.m_uid] = i;
    }
    pending.pop_back();
  };
  static const uint64_t delays[] = {0, 0, 1, 1000, 1000000, 1000000};
  uint64_t now = 0, state = seed;
  uint32_t uid = 4; /* ns-3's first regular uid */
  for (uint32_t i = 1; i <= ops; i++) {
    if (c->IsEmpty() != m->IsEmpty())
      return (int)i;
    uint64_t r = splitmix64(&state);
    unsigned what = (unsigned)(r % 100);
    unsigned insert_pct = i <= ops / 2 ? 60 : 35;
    if (what < insert_pct || m->IsEmpty()) {
      unsigned d = (unsigned)((r >> 8) % 7);
      Scheduler::Event ev;
      ev.key.m_ts = now + (d < 6 ? delays[d] : (r >> 16) % 1000000000);
      ev.key.m_uid = uid++;
      ev.key.m_context = (uint32_t)(r >> 48);
      /* a distinct, never dereferenced handle */
      ev.impl = reinterpret_cast<EventImpl *>((uintptr_t)ev.key.m_uid * 16);
      c->Insert(ev);
      m->Insert(ev);
      where[ev.key.m_uid] = pending.size();
      pending.push_back(ev);
    } else if (what < insert_pct + (100 - insert_pct) * 2 / 3) {
      if (!same_event(c->PeekNext(), m->PeekNext()))
        return (int)i;
      Scheduler::Event a = c->RemoveNext(), b = m->RemoveNext();
      if (!same_event(a, b))
        return (int)i;
      now = a.key.m_ts;
      forget(a.key.m_uid);
    } else {
      Scheduler::Event ev = pending[(r >> 8) % pending.size()];
      c->Remove(ev);
      m->Remove(ev);
      forget(ev.key.m_uid);
    }
  }
  while (!m->IsEmpty()) {
    if (c->IsEmpty() || !same_event(c->RemoveNext(), m->RemoveNext()))
      return (int)ops + 1;
  }
  return c->IsEmpty() ? WH_NS3_OK : (int)ops + 1;
}

extern "C" int wh_ns3_c_scheduler_check(const WhSchedulerClass *klass, uint32_t ops, uint64_t seed)
{
  if (!class_complete(klass) || ops >= (uint32_t)INT32_MAX)
    return WH_NS3_EINVAL;
  return check_against_map(CreateObject<WhCScheduler>(klass, false), ops, seed);
}

extern "C" int wh_ns3_c_scheduler_check_class(const char *name, uint32_t ops, uint64_t seed)
{
  if (name == nullptr || LookupClass(name) == nullptr || ops >= (uint32_t)INT32_MAX)
    return WH_NS3_EINVAL;
  /* a factory-made scheduler counts itself: keep the counts of the one in use */
  WhNs3SchedulerCounts counts = g_counts;
  const void *active = g_active;
  bool selected = g_selected;
  ObjectFactory f;
  f.SetTypeId(WhCScheduler::GetTypeId());
  f.Set("Class", StringValue(name));
  f.Set("Report", StringValue(""));
  g_checking = true;
  Ptr<WhCScheduler> c = f.Create<WhCScheduler>();
  g_checking = false;
  g_counts = counts;
  g_active = active;
  g_selected = selected;
  return check_against_map(c, ops, seed);
}

/* The Piper suite: the model catalogue, the memory model's pinned values, the
 * planner's enumeration and ranking, the compute model's fit, and `whsim plan`'s
 * refusals of bad input. */
#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "gnuplot.h"
#include "piper.h"
#include "scenario.h"
#include "test-util.h"
#include "topology-preset.h"

#define GB 1e9

static const WhPiperModel *model(const char *name)
{
  const WhPiperModel *m = wh_piper_find(wh_piper_catalogue(), name);
  ck_assert_msg(m != NULL, "%s not in the catalogue", name);
  return m;
}

/* |x - want| < 0.05 after rounding to one decimal, as printed */
static void assert_1dp(double x, double want, const char *what)
{
  ck_assert_msg(fabs(round(x * 10) / 10 - want) < 1e-9, "%s: %.4f, expected %.1f", what, x, want);
}

START_TEST(test_catalogue)
{
  const WhPiperCatalogue *c = wh_piper_catalogue();
  uint32_t single = 0, full = 0, weak = 0, migration = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    single += wh_piper_in_set(&c->models[i], "single-layer");
    full += wh_piper_in_set(&c->models[i], "full");
    weak += wh_piper_in_set(&c->models[i], "weak-scaling");
    migration += wh_piper_in_set(&c->models[i], "migration");
    if (wh_piper_in_set(&c->models[i], "single-layer"))
      ck_assert(c->models[i].single_layer_tflops > 0);
    if (wh_piper_in_set(&c->models[i], "full"))
      ck_assert(c->models[i].full_model_tflops > 0);
  }
  ck_assert_uint_eq(single, 8);
  ck_assert_uint_eq(full, 5);
  ck_assert_uint_eq(weak, 3);
  ck_assert_uint_eq(migration, 7);
  /* weak-scaling family with 2-matrix experts, and what SwiGLU would give */
  const char *weak_names[] = {"piper-110b", "piper-862b", "piper-1.7t"};
  double two[] = {110.7, 862.3, 1721.3}, three[] = {164.4, 1291.8, 2580.3};
  for (int i = 0; i < 3; i++) {
    WhPiperModel m = *model(weak_names[i]);
    ck_assert_uint_eq(m.ffn_mats, 2);
    assert_1dp(wh_piper_params(&m) * 1e-9, two[i], weak_names[i]);
    m.ffn_mats = 3;
    assert_1dp(wh_piper_params(&m) * 1e-9, three[i], "SwiGLU variant");
  }
  ck_assert_msg(fabs(wh_piper_params(model("mixtral-8x7b")) * 1e-9 - 46.70) < 0.005, "8x7B: %.4f",
                wh_piper_params(model("mixtral-8x7b")) * 1e-9);
  /* features the model leaves out are flagged */
  const WhPiperModel *v3 = model("deepseek-v3");
  g_autofree char *u = g_strjoinv(";", v3->unmodelled);
  ck_assert_ptr_nonnull(strstr(u, "MLA"));
  ck_assert_ptr_nonnull(strstr(u, "shared expert"));
  ck_assert_ptr_nonnull(strstr(u, "leading dense"));
  ck_assert_ptr_null(model("mixtral-8x7b")->unmodelled[0]);
}
END_TEST

START_TEST(test_memory_pinned)
{
  const WhPiperModel *m = model("piper-1.7t");
  WhPiperMemOpts o = {.tokens = 4096, .b_over_m = 1, .m = 128, .flash = TRUE};
  assert_1dp(wh_piper_mem_gcd(m, 32, 32, 0, &o) / GB, 60.7, "per-GCD, flash");
  assert_1dp(wh_piper_mem_literal(m, 32, 32, 0, &o) / GB, 37.3, "literal, flash");
  o.flash = FALSE;
  assert_1dp(wh_piper_mem_gcd(m, 32, 32, 0, &o) / GB, 146.6, "per-GCD, no flash");
  assert_1dp(wh_piper_mem_literal(m, 32, 32, 0, &o) / GB, 123.2, "literal, no flash");
  /* later stages hold fewer micro-batches: strictly decreasing */
  o.flash = TRUE;
  for (uint32_t i = 1; i < 32; i++)
    ck_assert(wh_piper_mem_gcd(m, 32, 32, i, &o) < wh_piper_mem_gcd(m, 32, 32, i - 1, &o));
  /* checkpointing keeps one layer input per micro-batch in flight */
  o.recompute = TRUE;
  ck_assert(wh_piper_mem_gcd(m, 32, 32, 0, &o) < 40 * GB);
  /* 110B on 64 GCDs */
  const WhPiperModel *s = model("piper-110b");
  o.recompute = FALSE;
  uint32_t pp[] = {4, 8, 16, 32};
  double want[] = {72.5, 65.8, 62.4, 60.7};
  for (int i = 0; i < 4; i++)
    assert_1dp(wh_piper_mem_gcd(s, pp[i], 64 / pp[i], 0, &o) / GB, want[i], "110B stage 0");
}
END_TEST

static WhPiperPlanOpts plan_opts(uint32_t gcds, gboolean flash)
{
  return (WhPiperPlanOpts){
      .gcds = gcds, .flash = flash, .hbm = 64.0 * 1024 * 1024 * 1024, .usable = 1.0};
}

static const WhPiperCandidate *find(const WhPiperPlan *p, uint32_t pp, uint32_t ep)
{
  for (uint32_t i = 0; i < p->n; i++) {
    if (p->c[i].pp == pp && p->c[i].ep == ep)
      return &p->c[i];
  }
  ck_abort_msg("no candidate PP%u x EP%u", pp, ep);
  return NULL;
}

START_TEST(test_plan_1024)
{
  WhPiperNet net;
  wh_piper_net_default(&net);
  const WhPiperCompute *c = wh_piper_compute_default();
  WhPiperPlanOpts o = plan_opts(1024, TRUE);
  WhPiperPlan p;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_piper_plan(model("piper-1.7t"), &o, c, &net, &p, &err));
  uint32_t evaluated = 0;
  for (uint32_t i = 0; i < p.n; i++)
    evaluated += p.c[i].mem != NULL;
  ck_assert_uint_eq(evaluated, 1);
  const WhPiperCandidate *k = find(&p, 32, 32);
  ck_assert(k->feasible);
  ck_assert_ptr_eq(wh_piper_plan_best(&p), k);
  ck_assert_ptr_nonnull(strstr(find(&p, 16, 64)->reason, "EP 64 > 32"));
  ck_assert_ptr_nonnull(strstr(find(&p, 64, 16)->reason, "PP 64 is more than L = 32"));
  wh_piper_plan_clear(&p);
  /* without FlashAttention it does not fit, unless activations are recomputed */
  o.flash = FALSE;
  ck_assert(wh_piper_plan(model("piper-1.7t"), &o, c, &net, &p, &err));
  ck_assert(!find(&p, 32, 32)->feasible);
  ck_assert_ptr_nonnull(strstr(find(&p, 32, 32)->reason, "stage 0 needs 146.6 GB"));
  wh_piper_plan_clear(&p);
  o.recompute = TRUE;
  ck_assert(wh_piper_plan(model("piper-1.7t"), &o, c, &net, &p, &err));
  ck_assert(find(&p, 32, 32)->feasible);
  wh_piper_plan_clear(&p);
}
END_TEST

START_TEST(test_plan_64)
{
  WhPiperNet net;
  wh_piper_net_default(&net);
  const WhPiperCompute *c = wh_piper_compute_default();
  WhPiperPlanOpts o = plan_opts(64, TRUE);
  WhPiperPlan p;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_piper_plan(model("piper-110b"), &o, c, &net, &p, &err));
  uint32_t evaluated = 0;
  for (uint32_t i = 0; i < p.n; i++)
    evaluated += p.c[i].mem != NULL;
  ck_assert_uint_eq(evaluated, 4);
  ck_assert(!find(&p, 4, 16)->feasible);
  ck_assert(find(&p, 8, 8)->feasible);
  ck_assert(find(&p, 16, 4)->feasible);
  ck_assert(find(&p, 32, 2)->feasible);
  const WhPiperCandidate *b = wh_piper_plan_best(&p);
  ck_assert_ptr_nonnull(b);
  for (uint32_t i = 0; i < p.n; i++) {
    const WhPiperCandidate *k = &p.c[i];
    if (!k->feasible)
      continue;
    /* step time >= the 1F1B bound on the busiest stage; TFLOPS consistent with MFU */
    ck_assert(k->step >= (k->m + k->pp - 1) * (k->t_fwd + k->t_bwd));
    ck_assert(fabs(k->mfu * WH_PIPER_PEAK - k->tflops * 1e12) < 1e3);
    ck_assert(b->tflops >= k->tflops);
  }
  g_autofree char *text = wh_piper_plan_text(model("piper-110b"), &o, c, &p);
  ck_assert_ptr_nonnull(strstr(text, "rank 1"));
  ck_assert_ptr_nonnull(strstr(text, "rank 3"));
  ck_assert_ptr_nonnull(strstr(text, "4 candidates pass"));
  ck_assert_ptr_nonnull(strstr(text, "memory per stage, PP32xEP2 (GB): 60.7"));
  /* every plan states its M and where it comes from, and its error range: the spread of
   * the held-out errors the calibration prints, applied to the best mesh */
  ck_assert_ptr_nonnull(strstr(text, "M = 128 micro-batches for PP32xEP2: 4 x PP, assumed"));
  g_autofree char *cal = wh_piper_calibration_text(wh_piper_catalogue(), c);
  const char *rows = strstr(cal, "held out");
  ck_assert_ptr_nonnull(rows);
  double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
  uint32_t n = 0;
  g_auto(GStrv) lines = g_strsplit(rows, "\n", -1);
  for (char **l = lines + 2; *l && **l && !g_str_has_prefix(*l, "error range"); l++) {
    const char *pct = strchr(*l, '%');
    ck_assert_ptr_nonnull(pct);
    const char *sgn = pct;
    while (sgn > *l && sgn[-1] != ' ')
      sgn--;
    double e = g_ascii_strtod(sgn, NULL);
    lo = MIN(lo, e), hi = MAX(hi, e), n++;
  }
  ck_assert_uint_eq(n, 8);
  g_autofree char *want = g_strdup_printf("the %u held-out comparisons (whsim plan --calibration) "
                                          "err by %+.1f%% to %+.1f%%",
                                          n, lo, hi);
  ck_assert_msg(strstr(text, want) != NULL, "plan lacks \"%s\":\n%s", want, text);
  const WhPiperCandidate *best = wh_piper_plan_best(&p);
  const char *allow = strstr(text, "they allow ");
  ck_assert_ptr_nonnull(allow);
  double a_lo = 0, a_hi = 0;
  ck_assert_int_eq(sscanf(allow, "they allow %lf to %lf", &a_lo, &a_hi), 2);
  /* the percentages above are rounded to 0.1% */
  ck_assert_msg(fabs(a_lo / (best->tflops / (1 + hi / 100)) - 1) < 1e-3, "%.2f", a_lo);
  ck_assert_msg(fabs(a_hi / (best->tflops / (1 + lo / 100)) - 1) < 1e-3, "%.2f", a_hi);
  wh_piper_plan_clear(&p);
  o.micro_batches = 6;
  ck_assert(wh_piper_plan(model("piper-110b"), &o, c, &net, &p, &err));
  g_autofree char *text6 = wh_piper_plan_text(model("piper-110b"), &o, c, &p);
  ck_assert_ptr_nonnull(strstr(text6, "M = 6 micro-batches for PP"));
  ck_assert_ptr_nonnull(strstr(text6, "given by --micro-batches"));
  wh_piper_plan_clear(&p);
  o.micro_batches = 0;
  /* Mixtral 8x7B: E = 8 allows EP 1, 2, 4, 8 */
  ck_assert(wh_piper_plan(model("mixtral-8x7b"), &o, c, &net, &p, &err));
  evaluated = 0;
  for (uint32_t i = 0; i < p.n; i++)
    evaluated += p.c[i].mem != NULL;
  ck_assert_uint_eq(evaluated, 3); /* PP 8 x EP 8, 16 x 4, 32 x 2 (= L); PP 64 > L */
  wh_piper_plan_clear(&p);
}
END_TEST

START_TEST(test_calibration)
{
  WhPiperCompute c;
  double cost = wh_piper_calibrate(wh_piper_catalogue(), &c);
  ck_assert(c.e_max > 0 && c.e_max <= 1);
  ck_assert(isfinite(cost));
  /* the fit is a least-squares optimum: moving a parameter does not lower the cost */
  WhPiperCompute d = c;
  double base = 0;
  const WhPiperCatalogue *cat = wh_piper_catalogue();
  for (uint32_t i = 0; i < cat->n; i++) {
    if (cat->models[i].single_layer_tflops > 0) {
      double r = log(wh_piper_single_layer_tflops(&d, &cat->models[i]) /
                     cat->models[i].single_layer_tflops);
      base += r * r;
    }
  }
  for (int k = 0; k < 4; k++) {
    d = c;
    double *x = k < 2 ? &d.n0 : &d.e_max;
    *x *= k % 2 ? 1.1 : 0.9;
    double sq = 0;
    for (uint32_t i = 0; i < cat->n; i++) {
      if (cat->models[i].single_layer_tflops > 0) {
        double r = log(wh_piper_single_layer_tflops(&d, &cat->models[i]) /
                       cat->models[i].single_layer_tflops);
        sq += r * r;
      }
    }
    ck_assert_msg(sq >= base - 1e-12, "perturbation %d lowers the cost %.6f -> %.6f", k, base, sq);
  }
  g_autofree char *text = wh_piper_calibration_text(cat, &c);
  fprintf(stderr, "%s", text);
  ck_assert_ptr_nonnull(strstr(text, "deepseek-v2"));
  ck_assert_ptr_nonnull(strstr(text, "piper-1.7t"));
}
END_TEST

static void write_file(const char *path, const char *text)
{
  ck_assert(g_file_set_contents(path, text, -1, NULL));
}

static const char *good_model = "[tiny]\nHidden=512\nLayers=8\nExperts=8\nTopK=2\nFfnSize=1024\n"
                                "Heads=8\nKvHeads=8\nSeqLength=1024\nVocab=0\nFfnMatrices=2\n";

/* Runs `whsim plan` and expects exit status 2 with `needle` on stderr. */
static void refused(const char *needle, const char *const *args)
{
  g_autofree char *out = NULL, *err = NULL;
  int status = wh_test_whsim(args, &out, &err);
  ck_assert_msg(status == 2, "status %d for %s %s: %s", status, args[1], args[2], err);
  ck_assert_msg(strstr(err, needle) != NULL, "stderr lacks \"%s\": %s", needle, err);
}

START_TEST(test_cli_bad_inputs)
{
  g_autofree char *dir = g_dir_make_tmp("piper-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "tiny.ini", NULL);
  refused("unknown model", (const char *[]){"plan", "--model", "gpt-9", "--gcds", "64", NULL});
  refused("--gcds 60", (const char *[]){"plan", "--model", "piper-110b", "--gcds", "60", NULL});
  refused("largest Frontier",
          (const char *[]){"plan", "--model", "piper-110b", "--gcds", "75784", NULL});
  refused("--tokens 0",
          (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--tokens", "0", NULL});
  refused("UsableFraction", (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64",
                                             "--set", "wh::Piper::UsableFraction=0", NULL});
  refused("only wh::Piper::*, wh::Dragonfly::*, wh::Workload::MessageAlpha",
          (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--set",
                           "wh::Link::Rate=1Gbps", NULL});
  refused("FabricEfficiency",
          (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--set",
                           "wh::Dragonfly::FabricEfficiency=1.5", NULL});
  /* a runtime reserve: 1.7T on 1024 GCDs with FlashAttention no longer fits at 85% */
  {
    g_autofree char *o85 = NULL, *e85 = NULL;
    ck_assert_int_eq(
        wh_test_whsim((const char *[]){"plan", "--model", "piper-1.7t", "--gcds", "1024", "--flash",
                                       "--set", "wh::Piper::UsableFraction=0.85", NULL},
                      &o85, &e85),
        0);
    ck_assert_ptr_nonnull(strstr(o85, "no: stage 0 needs 60.7 GB > 58.4 GB"));
  }
  /* the machine's size: a group count that cannot hold the job, or beyond the preset */
  refused(
      "--groups 1: cannot hold the job: 2048 GCDs (256 nodes) need at least 2 groups",
      (const char *[]){"plan", "--model", "piper-110b", "--gcds", "2048", "--groups", "1", NULL});
  refused("at most 77 groups", (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64",
                                                "--groups", "78", NULL});
  refused("--groups x",
          (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--groups", "x", NULL});
  /* a job of 256 nodes or more is emitted on at least 4 groups; fewer nodes on what
   * holds them; --groups overrides */
  {
    static const struct {
      const char *gcds, *groups, *want;
    } sizes[] = {{"2048", NULL, "groups=\"4\""},
                 {"1024", NULL, "groups=\"1\""},
                 {"2048", "3", "groups=\"3\""}};
    g_autofree char *big = g_build_filename(dir, "big.ini", NULL);
    g_autofree char *xml = g_build_filename(dir, "big.xml", NULL);
    write_file(big, "[big]\nHidden=512\nLayers=64\nExperts=32\nTopK=2\nFfnSize=1024\n"
                    "Heads=8\nKvHeads=8\nSeqLength=1024\nVocab=0\nFfnMatrices=2\n");
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
      g_autofree char *o = NULL, *e = NULL, *text = NULL;
      const char *args[] = {"plan",
                            "--model",
                            big,
                            "--gcds",
                            sizes[i].gcds,
                            "--emit-scenario",
                            xml,
                            sizes[i].groups ? "--groups" : NULL,
                            sizes[i].groups,
                            NULL};
      ck_assert_msg(wh_test_whsim(args, &o, &e) == 0, "%s", e);
      ck_assert(g_file_get_contents(xml, &text, NULL, NULL));
      ck_assert_msg(strstr(text, sizes[i].want), "%s GCDs: %s", sizes[i].gcds, text);
    }
    g_unlink(xml);
    g_unlink(big);
  }
  /* --verify: a mesh that does not fit is refused; one that fits is simulated with the
   * builder's roofline compute (not the planner's times) and printed term by term */
  refused("--verify: PP4xEP16 does not fit: stage 0 needs",
          (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--flash", "--mesh",
                           "4x16", "--verify", NULL});
  {
    g_autofree char *v = NULL, *ve = NULL, *xml = g_build_filename(dir, "verify.xml", NULL);
    g_autofree char *small = g_build_filename(dir, "small.ini", NULL), *text = NULL;
    write_file(small, "[small]\nHidden=256\nLayers=4\nExperts=8\nTopK=2\nFfnSize=512\n"
                      "Heads=4\nKvHeads=4\nSeqLength=256\nVocab=0\nFfnMatrices=2\n");
    const char *args[] = {"plan",
                          "--model",
                          small,
                          "--gcds",
                          "16",
                          "--micro-batches",
                          "2",
                          "--mesh",
                          "2x8",
                          "--verify",
                          "--emit-scenario",
                          xml,
                          NULL};
    ck_assert_msg(wh_test_whsim(args, &v, &ve) == 0, "%s", ve);
    static const char *const terms[] = {"compute per micro-batch", "pipeline send",
                                        "expert all-to-all",       "gradient all-reduce",
                                        "bubble (residual)",       "step"};
    for (size_t i = 0; i < G_N_ELEMENTS(terms); i++)
      ck_assert_msg(strstr(v, terms[i]) != NULL, "no %s in:\n%s", terms[i], v);
    ck_assert_ptr_nonnull(strstr(v, "verify: PP2xEP8, M = 2"));
    double plan = 0, sim = 0;
    const char *step = strstr(v, "\nstep ");
    ck_assert_ptr_nonnull(step);
    ck_assert_int_eq(sscanf(step, "\nstep %lf %lf", &plan, &sim), 2);
    ck_assert(plan > 0 && sim > 0);
    ck_assert(g_file_get_contents(xml, &text, NULL, NULL));
    ck_assert_ptr_nonnull(strstr(text, "wh::ModelPreset::PeakFlops"));
    ck_assert_ptr_null(strstr(text, "FixedTimes"));
    /* HALO selected for the emitted mesh: the model preset's all-to-alls run as HALO */
    g_autofree char *h = NULL, *he = NULL, *htext = NULL;
    const char *hargs[] = {"plan",
                           "--model",
                           small,
                           "--gcds",
                           "16",
                           "--micro-batches",
                           "2",
                           "--mesh",
                           "2x8",
                           "--set",
                           "wh::ModelPreset::AllToAll=halo",
                           "--verify",
                           "--emit-scenario",
                           xml,
                           NULL};
    ck_assert_msg(wh_test_whsim(hargs, &h, &he) == 0, "%s", he);
    ck_assert_ptr_nonnull(strstr(h, "verify: PP2xEP8"));
    ck_assert(g_file_get_contents(xml, &htext, NULL, NULL));
    ck_assert_ptr_nonnull(strstr(htext, "wh::ModelPreset::AllToAll\" value=\"halo\""));
    g_unlink(xml);
    g_unlink(small);
  }
  /* --plot: an unwritable place is refused before anything is planned; a model title
   * with gnuplot's and the shell's special characters is drawn as it is */
  {
    g_autofree char *file_dir = g_build_filename(dir, "not-a-dir", NULL);
    g_autofree char *under = g_build_filename(file_dir, "plots", NULL);
    write_file(file_dir, "x");
    refused("--plot", (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--plot",
                                       under, NULL});
    g_unlink(file_dir);
    g_autofree char *gp = wh_gnuplot_find();
    if (gp) {
      g_autofree char *evil = g_build_filename(dir, "evil.ini", NULL);
      g_autofree char *pdir = g_build_filename(dir, "plots", NULL);
      g_autofree char *marker = g_build_filename(dir, "plots", "pwned", NULL);
      write_file(evil, "[evil]\nTitle=a'b`touch pwned` @x $(touch pwned) !touch pwned\n"
                       "Hidden=256\nLayers=4\nExperts=8\nTopK=2\nFfnSize=512\nHeads=4\n"
                       "KvHeads=4\nSeqLength=256\nVocab=0\nFfnMatrices=2\n");
      g_autofree char *po = NULL, *pe = NULL, *svg = NULL;
      const char *pargs[] = {"plan", "--model", evil, "--gcds", "16", "--plot", pdir, NULL};
      ck_assert_msg(wh_test_whsim(pargs, &po, &pe) == 0, "%s", pe);
      g_autofree char *mem = g_build_filename(pdir, "plan-memory.svg", NULL);
      ck_assert(g_file_get_contents(mem, &svg, NULL, NULL));
      ck_assert_msg(strstr(svg, "a'b`touch pwned` @x $(touch pwned) !touch pwned") != NULL, "%s",
                    svg);
      ck_assert(!g_file_test(marker, G_FILE_TEST_EXISTS));
      wh_test_remove_tree(pdir);
      g_unlink(evil);
    }
  }
  /* --skew: malformed or out of range */
  refused(
      "--skew zipf:x: S is not a number",
      (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--skew", "zipf:x", NULL});
  refused(
      "--skew zipf:-1: S = -1 is outside 0..8",
      (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--skew", "zipf:-1", NULL});
  refused(
      "--skew uniform: expected zipf:S",
      (const char *[]){"plan", "--model", "piper-110b", "--gcds", "64", "--skew", "uniform", NULL});
  /* E = 8, L = 8 on 128 GCDs: EP <= 8 gives PP >= 16 > L */
  write_file(file, good_model);
  refused("no EP <= 32 divides", (const char *[]){"plan", "--model", file, "--gcds", "128", NULL});
  /* the good file plans */
  g_autofree char *out = NULL, *err = NULL;
  ck_assert_int_eq(
      wh_test_whsim((const char *[]){"plan", "--model", file, "--gcds", "16", NULL}, &out, &err),
      0);
  ck_assert_ptr_nonnull(strstr(out, "model tiny"));
  struct {
    const char *from, *to, *needle;
  } edits[] = {
      {"Hidden=512\n", "", "field Hidden is missing"},
      {"Layers=8", "Layers=-8", "field Layers = -8 is negative"},
      {"TopK=2", "TopK=1.5", "field TopK = \"1.5\" is not an integer"},
      {"FfnSize=1024", "FfnSize=lots", "field FfnSize = \"lots\" is not an integer"},
      {"FfnMatrices=2", "FfnMatrices=4", "field FfnMatrices = 4"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
    GString *t = g_string_new(good_model);
    g_string_replace(t, edits[i].from, edits[i].to, 1);
    write_file(file, t->str);
    g_string_free(t, TRUE);
    refused(edits[i].needle, (const char *[]){"plan", "--model", file, "--gcds", "16", NULL});
    refused("tiny.ini", (const char *[]){"plan", "--model", file, "--gcds", "16", NULL});
  }
  g_unlink(file);
  g_rmdir(dir);
}
END_TEST

/* The planner's machine is the Frontier preset's (rates, FabricEfficiency and the
 * message cost); the same machine parameters given to `whsim plan --set` change the
 * plan and are written into an emitted scenario, which then simulates that machine. */
START_TEST(test_machine_from_preset)
{
  WhPiperNet net;
  wh_piper_net_default(&net);
  g_autoptr(WhConfig) cfg = wh_config_new();
  g_autoptr(GError) err = NULL;
  /* the topology module's preset: its machine, size limits and routing */
  const WhTopologyPreset *p = wh_topology_preset_lookup("frontier");
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->topology, "wh::Dragonfly");
  ck_assert_uint_eq(p->groups_min, 1);
  ck_assert_uint_eq(p->groups_max, 77);
  ck_assert_uint_eq(p->n_head, 1);
  ck_assert_str_eq(p->head[0].key, "wh::Dragonfly::Routing");
  ck_assert_str_eq(p->head[0].value, "adaptive");
  ck_assert_ptr_null(wh_topology_preset_lookup("summit"));
  ck_assert_ptr_null(wh_topology_preset_lookup(NULL));
  ck_assert(wh_topology_preset_apply(cfg, "frontier", &err));
  ck_assert_str_eq(wh_config_choice(cfg, "wh::Dragonfly", "Node"), "frontier");
  ck_assert_str_eq(wh_config_origin(cfg, "wh::Workload", "MessageAlpha"), "preset frontier");
  /* the groups and the head are not the machine model's: left at their defaults */
  ck_assert_ptr_null(wh_config_origin(cfg, "wh::Dragonfly", "Groups"));
  ck_assert_ptr_null(wh_config_origin(cfg, "wh::Dragonfly", "Routing"));
  ck_assert_double_eq(net.nic, wh_config_rate(cfg, "wh::Dragonfly", "EndpointRate") / 8.0);
  ck_assert_double_eq_tol(net.fabric, 50e9 * 0.76, 1);
  ck_assert_double_eq_tol(net.latency,
                          wh_time_to_s(wh_config_time(cfg, "wh::Workload", "MessageAlpha")), 1e-15);
  ck_assert(!wh_topology_preset_apply(cfg, "summit", &err));
  ck_assert(g_error_matches(err, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE));
  ck_assert_str_eq(err->message, "unknown preset \"summit\" (known: frontier)");
  g_clear_error(&err);
  /* an RCCL-like message cost makes every plan slower, and the emitted scenario says so */
  g_autofree char *dir = g_dir_make_tmp("piper-XXXXXX", NULL);
  g_autofree char *xml = g_build_filename(dir, "m.xml", NULL);
  g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL;
  ck_assert_int_eq(wh_test_whsim((const char *[]){"plan", "--model", "mixtral-8x7b", "--gcds", "64",
                                                  "--flash", NULL},
                                 &o1, &e1),
                   0);
  ck_assert_int_eq(
      wh_test_whsim((const char *[]){"plan", "--model", "mixtral-8x7b", "--gcds", "64", "--flash",
                                     "--set", "wh::Workload::MessageAlpha=26us", "--set",
                                     "wh::Dragonfly::FabricEfficiency=0.5", "--emit-scenario", xml,
                                     NULL},
                    &o2, &e2),
      0);
  ck_assert_str_ne(o1, o2);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(xml, &text, NULL, NULL));
  ck_assert_ptr_nonnull(strstr(text, "<set param=\"wh::Workload::MessageAlpha\" value=\"26us\"/>"));
  ck_assert_ptr_nonnull(
      strstr(text, "<set param=\"wh::Dragonfly::FabricEfficiency\" value=\"0.5\"/>"));
  g_autoptr(WhScenario) sc = wh_scenario_load(xml, &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  g_autoptr(WhRun) run = wh_run_new(sc, NULL, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(wh_config_time(run->cfg, "wh::Workload", "MessageAlpha"), 26 * WH_US);
  ck_assert_double_eq(wh_config_double(run->cfg, "wh::Dragonfly", "FabricEfficiency"), 0.5);
  g_unlink(xml);
  g_rmdir(dir);
}
END_TEST

/* The emitted 64-GCD scenario (a small model, so that it runs in a test: d 256, L 8,
 * E 8, T 512, M 2, PP8 x EP8) builds through the preset, runs on the packet-level
 * engine to a clean end, every compute op takes exactly the compute model's time, and
 * the planner's step time is within 10% of the engine's iteration. */
START_TEST(test_emit_scenario)
{
  g_autofree char *dir = g_dir_make_tmp("piper-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "tiny.ini", NULL);
  g_autofree char *xml = g_build_filename(dir, "tiny.xml", NULL);
  write_file(file, "[tiny]\nHidden=256\nLayers=8\nExperts=8\nTopK=2\nFfnSize=512\n"
                   "Heads=4\nKvHeads=4\nSeqLength=1024\nVocab=1000\nFfnMatrices=3\n");
  g_autoptr(GError) err = NULL;
  WhPiperCatalogue *cat = wh_piper_catalogue_load(file, &err);
  ck_assert_msg(cat != NULL, "%s", err ? err->message : "");
  WhPiperNet net;
  wh_piper_net_default(&net);
  const WhPiperCompute *c = wh_piper_compute_default();
  WhPiperPlanOpts o = plan_opts(64, TRUE);
  o.tokens = 512;
  o.micro_batches = 2;
  WhPiperPlan p;
  ck_assert(wh_piper_plan(&cat->models[0], &o, c, &net, &p, &err));
  const WhPiperCandidate *k = find(&p, 8, 8);
  WhPiperOpTimes t;
  ck_assert(wh_piper_emit_scenario(&cat->models[0], &o, c, k, xml, &t, &err));
  WhPiperLayerTime lt;
  wh_piper_layer_time(c, &cat->models[0], 512, 8, TRUE, &lt);
  ck_assert_uint_eq(t.attn, (uint64_t)llround(lt.attn * 1e12));
  ck_assert_uint_eq(t.expert, (uint64_t)llround(lt.expert * 1e12));
  ck_assert(t.attn > 0 && t.expert > 0 && t.head > 0);
  g_autoptr(WhScenario) sc = wh_scenario_load(xml, &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  g_autoptr(WhRun) run = wh_test_run(sc, NULL);
  wh_test_assert_clean_end(run);
  uint32_t computes = 0;
  for (uint32_t i = 0; i < wh_workload_n_ops(run->workload); i++) {
    WhOpInfo info;
    wh_workload_op_info(run->workload, i, &info);
    if (info.kind != WH_OP_COMPUTE)
      continue;
    uint64_t fwd = strstr(info.name, "/attn")     ? t.attn
                   : strstr(info.name, "/expert") ? t.expert
                                                  : t.head;
    uint64_t want = strstr(info.name, "/F") ? fwd : 2 * fwd;
    ck_assert_msg(info.end - info.start == want,
                  "%s took %" G_GUINT64_FORMAT " ps, model %" G_GUINT64_FORMAT, info.name,
                  (uint64_t)(info.end - info.start), want);
    computes++;
  }
  /* the planner's step time against the engine's iteration (both pay the preset's
   * MessageAlpha per message) */
  WhIterationStats st;
  wh_run_iteration_stats(run, 0, &st);
  double sim = wh_time_to_s(st.time);
  WhPiperPlan p0;
  ck_assert(wh_piper_plan(&cat->models[0], &o, c, &net, &p0, &err));
  double step = find(&p0, 8, 8)->step;
  fprintf(stderr, "emitted PP8 x EP8: engine %.3f ms, planner %.3f ms (%+.1f%%)\n", sim * 1e3,
          step * 1e3, (step / sim - 1) * 100);
  ck_assert_msg(fabs(step / sim - 1) < 0.10, "planner %.3f ms, engine %.3f ms", step * 1e3,
                sim * 1e3);
  wh_piper_plan_clear(&p0);
  /* 64 ranks x (4 m L + 2 m head ops on the last stage's 8 ranks) */
  ck_assert_uint_eq(computes, 64 * 4 * 2 * 1 + 8 * 2 * 2);
  /* a second plan with --mesh of a non-candidate is refused */
  g_autofree char *out = NULL, *errs = NULL;
  int status = wh_test_whsim((const char *[]){"plan", "--model", file, "--gcds", "64", "--mesh",
                                              "2x32", "--emit-scenario", xml, NULL},
                             &out, &errs);
  ck_assert_int_eq(status, 2);
  ck_assert_ptr_nonnull(strstr(errs, "--mesh 2x32"));
  /* an output whose directory does not exist: refused before planning, status 2, named */
  g_autofree char *nowhere = g_build_filename(dir, "no-such-dir", "s.xml", NULL);
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&errs, g_free);
  status = wh_test_whsim(
      (const char *[]){"plan", "--model", file, "--gcds", "64", "--emit-scenario", nowhere, NULL},
      &out, &errs);
  ck_assert_int_eq(status, 2);
  ck_assert_ptr_nonnull(strstr(errs, "--emit-scenario"));
  ck_assert_ptr_nonnull(strstr(errs, "no-such-dir"));
  wh_piper_plan_clear(&p);
  wh_piper_catalogue_free(cat);
  g_unlink(xml);
  g_unlink(file);
  g_rmdir(dir);
}
END_TEST

/* The all-to-all model's bandwidth terms against the packet-level engine on the
 * Frontier preset: one direct all-to-all of 2 T k d bytes per GCD (T = 256, k = 2,
 * d = 5120) over EP consecutive GCDs, for EP 2 .. 32, with MessageAlpha 0 on both sides
 * (the engine staggers a GCD's messages by its serial alphas, which the model does not
 * follow flow by flow; the alpha terms are checked on their own below). The model
 * leaves out packet headers and ACKs (about 3%) and the path latency. */
START_TEST(test_a2a_vs_engine)
{
  const WhPiperModel *m = model("piper-110b");
  WhPiperNet net;
  wh_piper_net_default(&net);
  net.latency = 0;
  g_autofree char *dir = g_dir_make_tmp("piper-XXXXXX", NULL);
  g_autofree char *xml = g_build_filename(dir, "a2a.xml", NULL);
  uint32_t eps[] = {2, 4, 8, 16, 32};
  ck_assert_uint_eq(net.a2a_batch, 13); /* the Frontier preset's collective model */
  /* the direct all-to-all against the direct formula; the preset's default (rccl in
   * batches) against the batched one */
  for (int batched = 0; batched < 2; batched++) {
    WhPiperNet use = net;
    if (!batched)
      use.a2a_batch = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(eps); i++) {
      uint64_t bytes = 2ull * 256 * m->top_k * m->hidden;
      g_autofree char *text = g_strdup_printf(
          "<?xml version=\"1.0\"?>\n<scenario name=\"a2a\" seed=\"1\" cc=\"dcqcn\">\n"
          "<topology preset=\"frontier\" groups=\"1\"/>\n"
          "<set param=\"wh::Workload::MessageAlpha\" value=\"0ns\"/>\n<workload>\n<collective "
          "id=\"a\" kind=\"all-to-all\"%s ranks=\"0-%u\" size=\"%" G_GUINT64_FORMAT
          "B\"/>\n</workload>\n</scenario>\n",
          batched ? "" : " algorithm=\"direct\"", eps[i] - 1, bytes);
      write_file(xml, text);
      g_autoptr(GError) err = NULL;
      g_autoptr(WhScenario) sc = wh_scenario_load(xml, &err);
      ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
      g_autoptr(WhRun) run = wh_test_run(sc, NULL);
      WhIterationStats st;
      wh_run_iteration_stats(run, 0, &st);
      double sim = wh_time_to_s(st.time), model_t = wh_piper_a2a_time(&use, m, 256, eps[i]);
      fprintf(stderr, "all-to-all EP %2u, %s: engine %.1f us, model %.1f us (%+.1f%%)\n", eps[i],
              batched ? "default (rccl batches)" : "direct", sim * 1e6, model_t * 1e6,
              (model_t / sim - 1) * 100);
      ck_assert_msg(fabs(model_t / sim - 1) < 0.08, "EP %u: model %.1f us, engine %.1f us", eps[i],
                    model_t * 1e6, sim * 1e6);
    }
  }
  net.a2a_batch = 0;
  g_unlink(xml);
  g_rmdir(dir);
  /* the alpha terms: one alpha on top of the busiest link's time; EP - 1 alphas in a
   * row (plus the last chunk, under 1 us at T = 1) when they take longer */
  WhPiperNet alpha = net;
  alpha.latency = 200e-9;
  ck_assert_double_eq_tol(wh_piper_a2a_time(&alpha, m, 256, 8),
                          wh_piper_a2a_time(&net, m, 256, 8) + 200e-9, 1e-12);
  alpha.latency = 26e-6;
  double t = wh_piper_a2a_time(&alpha, m, 1, 32);
  ck_assert(t >= 31 * 26e-6 && t < 31 * 26e-6 + 1e-6);
}
END_TEST

/* Routing skew: uniform at S = 0; the hill climbing never raises the busiest load and
 * stops at the hottest expert's share; the step grows with the load; the paper's
 * migration table (Table IV: Mixtral 8x7B 2.63 GB in 52.6 ms, DeepSeek-V3 21.00 GB in
 * 420.0 ms, in GiB) from 48 d d_ffn bytes per expert. */
START_TEST(test_skew)
{
  const WhPiperModel *m = model("piper-862b"); /* E = 128 */
  WhPiperSkew k;
  wh_piper_skew(m, 16, 0, 8, &k);
  ck_assert_double_eq_tol(k.before, 1.0, 1e-12);
  ck_assert_uint_eq(k.swaps, 0);
  double prev = 1.0;
  for (double s = 0.5; s <= 2.0; s += 0.5) {
    wh_piper_skew(m, 16, s, 8, &k);
    ck_assert_msg(k.before > prev, "S %.1f: %.3f", s, k.before);
    ck_assert(k.after <= k.before && k.after >= MAX(1.0, k.hottest) - 1e-12);
    ck_assert(k.swaps >= 1 && k.swaps <= 8);
    prev = k.before;
  }
  /* 8 experts on 8 GCDs: one each, nothing to swap */
  wh_piper_skew(model("mixtral-8x7b"), 8, 1.0, 8, &k);
  ck_assert_uint_eq(k.swaps, 0);
  ck_assert_double_eq_tol(k.before, k.hottest, 1e-12);
  g_autofree char *table = wh_piper_migration_table_text(wh_piper_catalogue());
  ck_assert_msg(strstr(table, "mixtral-8x7b           1        2.82        2.62        52.5"), "%s",
                table);
  ck_assert_msg(strstr(table, "deepseek-v3           32       22.55       21.00       420.0"), "%s",
                table);
  /* the plan states the skewed step and the migration */
  WhPiperNet net;
  wh_piper_net_default(&net);
  WhPiperPlanOpts o = plan_opts(512, TRUE);
  o.skew = TRUE;
  o.skew_s = 1.0;
  WhPiperPlan p;
  ck_assert(wh_piper_plan(m, &o, wh_piper_compute_default(), &net, &p, NULL));
  g_autofree char *text = wh_piper_plan_text(m, &o, wh_piper_compute_default(), &p);
  ck_assert_ptr_nonnull(strstr(text, "skew zipf:1 on PP32xEP16: busiest GCD load"));
  ck_assert_ptr_nonnull(strstr(text, "migration every 1 step:"));
  wh_piper_plan_clear(&p);
}
END_TEST

Suite *wh_piper_suite(void)
{
  Suite *s = suite_create("piper");
  TCase *tc = tcase_create("piper");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_catalogue);
  tcase_add_test(tc, test_memory_pinned);
  tcase_add_test(tc, test_plan_1024);
  tcase_add_test(tc, test_plan_64);
  tcase_add_test(tc, test_calibration);
  tcase_add_test(tc, test_cli_bad_inputs);
  tcase_add_test(tc, test_machine_from_preset);
  tcase_add_test(tc, test_emit_scenario);
  tcase_add_test(tc, test_a2a_vs_engine);
  tcase_add_test(tc, test_skew);
  suite_add_tcase(s, tc);
  return s;
}

#!/usr/bin/env python3
"""Write a build.ninja that compiles the HPCC project's ns-3.17 program scratch/third.cc.

    ninja-gen.py SIMULATION_DIR BUILD_DIR

ns-3.17 builds with waf under Python 2. This generator reads the same per-module source
and header lists instead: it executes each needed module's `src/<m>/wscript` build()
function against a small stand-in for waf's build context (the lists are Python code
with conditions on the configuration, so reading them as Python is the faithful way),
with the configuration of an optimized Linux build without optional libraries
(128-bit int64x64, threads and the real-time simulator on; GTK, libxml2, SQLite, MPI,
NSC, examples and Python bindings off). It then writes what waf would generate: the
`ns3/` include folder (headers copied under their base names), each module's
`<m>-module.h` aggregator, `ns3/core-config.h` and `ns3/config-store-config.h`, and a
build.ninja with one compile edge per source, as waf's optimized profile compiles
(-O3 -march=native -g, NDEBUG off as in waf, NS3_MODULE_COMPILATION for module sources).
Nothing of the HPCC tree is copied into the project: this file only reads it.
"""
import os
import shutil
import sys
import types

MODULES = ["core", "network", "config-store", "internet", "bridge", "mpi",
           "point-to-point", "applications", "tools", "stats"]
ENV = {"INT64X64_USE_128": True, "ENABLE_THREADING": True, "ENABLE_REAL_TIME": True}
CXXFLAGS = "-std=gnu++11 -O3 -march=native -g -fPIC -w -pthread"


class Env(dict):
    def __getitem__(self, key):
        return ENV.get(key, False)

    def __getattr__(self, key):
        return ENV.get(key, False)


class Gen:
    def __init__(self, module=None):
        self.module = module
        self.source = []
        self.use = []


class Bld:
    def __init__(self):
        self.env = Env()
        self.modules = []
        self.headers = []

    def __call__(self, **kw):
        g = Gen()
        if kw.get("features") == "ns3header":
            self.headers.append(g)
        return g

    def create_ns3_module(self, name, deps=None):
        g = Gen(name)
        self.modules.append(g)
        return g

    def create_ns3_module_test_library(self, name):
        return Gen(name)

    def ns3_python_bindings(self):
        return None

    def install_files(self, *a, **kw):
        pass

    def recurse(self, *a, **kw):
        pass


def stub_modules():
    waflib = types.ModuleType("waflib")
    waflib.__path__ = []
    for sub in ("Options", "Logs", "Utils", "Task", "TaskGen", "Build", "Configure", "Errors"):
        m = types.ModuleType("waflib." + sub)
        m.options = types.SimpleNamespace()
        m.platform = "linux"
        m.WafError = Exception
        setattr(waflib, sub, m)
        sys.modules["waflib." + sub] = m
    sys.modules["waflib"] = waflib
    wutils = types.ModuleType("wutils")
    wutils.APPNAME, wutils.VERSION = "ns", "3.17"
    sys.modules["wutils"] = wutils


def write_if_changed(path, text):
    """Leaves a file whose text is unchanged alone, so Ninja keeps what depends on it."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


def module_lists(src, name):
    path = os.path.join(src, "src", name, "wscript")
    with open(path) as f:
        code = f.read().expandtabs(8)  # Python 2 reads a tab as 8 columns
    scope = {"__file__": path, "__name__": "wscript"}
    exec(compile(code, path, "exec"), scope)
    bld = Bld()
    scope["build"](bld)
    sources = [s for g in bld.modules for s in g.source]
    headers = [h for g in bld.headers for h in g.source]
    return sources, headers


def main():
    sim, out = sys.argv[1], sys.argv[2]
    stub_modules()
    inc = os.path.join(out, "include", "ns3")
    os.makedirs(inc, exist_ok=True)
    lines = ["cxx = g++", "cxxflags = %s" % CXXFLAGS,
             "rule cxx", "  command = $cxx -MMD -MF $out.d $cxxflags $defs -I%s -c $in -o $out"
             % os.path.join(out, "include"),
             "  depfile = $out.d", "  deps = gcc", "  description = CXX $in",
             "rule link", "  command = $cxx $cxxflags -o $out $in -lrt", "  description = LINK $out",
             ""]
    objs = []
    for m in MODULES:
        sources, headers = module_lists(sim, m)
        names = []
        for h in headers:
            # copy2 keeps the archive's file times: a rerun recompiles nothing unchanged
            shutil.copy2(os.path.join(sim, "src", m, h), os.path.join(inc, os.path.basename(h)))
            names.append(os.path.basename(h))
        write_if_changed(os.path.join(inc, "%s-module.h" % m),
                         "#ifdef NS3_MODULE_COMPILATION\n# error \"module aggregator header\"\n"
                         "#endif\n#ifndef NS3_MODULE_%s\n" % m.upper().replace("-", "_") +
                         "".join('#include "%s"\n' % n for n in sorted(names)) + "#endif\n")
        for s in sources:
            obj = os.path.join("obj", m, s.replace("/", "_") + ".o")
            objs.append(obj)
            lines += ["build %s: cxx %s" % (obj, os.path.join(sim, "src", m, s)),
                      "  defs = -DNS3_MODULE_COMPILATION"]
    defines = ("INT64X64_USE_128", "HAVE___UINT128_T", "HAVE_STDINT_H", "HAVE_INTTYPES_H",
               "HAVE_SYS_TYPES_H", "HAVE_SYS_STAT_H", "HAVE_DIRENT_H", "HAVE_STDLIB_H",
               "HAVE_GETENV", "HAVE_SIGNAL_H", "HAVE_PTHREAD_H", "HAVE_RT")
    write_if_changed(os.path.join(inc, "core-config.h"),
                     "#ifndef NS3_CORE_CONFIG_H\n#define NS3_CORE_CONFIG_H\n" +
                     "".join("#define %s 1\n" % d for d in defines) + "#endif\n")
    write_if_changed(os.path.join(inc, "config-store-config.h"),
                     "#ifndef NS3_CONFIG_STORE_CONFIG_H\n#define NS3_CONFIG_STORE_CONFIG_H\n#endif\n")
    lines += ["build obj/scratch/third.o: cxx %s" % os.path.join(sim, "scratch", "third.cc"),
              "  defs =",
              "build third: link obj/scratch/third.o " + " ".join(objs), ""]
    write_if_changed(os.path.join(out, "build.ninja"), "\n".join(lines))


if __name__ == "__main__":
    main()

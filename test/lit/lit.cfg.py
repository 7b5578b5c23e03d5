# lit configuration: every test runs with LLVM 22's tools (FileCheck, not,
# count) first on PATH and its own empty $TMPDIR, so a test can check that
# fatlink left nothing behind.
import os
import shutil
import subprocess
import lit.formats

config.name = "fatlink"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test"]
# lit starts the slowest tests first, by the times of the build's last run,
# or on a new build by .lit_test_times.txt beside this file (seconds, then
# the test; refresh it from build/test/lit/.lit_test_times.txt when tests
# change much).
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fatlink_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "/usr/bin:/bin")])
config.environment["LD_LIBRARY_PATH"] = config.llvm_lib_dir

# The sanitizer builds cannot load libocloc (RTLD_DEEPBIND): they spawn
# ocloc, and tests of the in-process path say UNSUPPORTED: asan (which the
# ThreadSanitizer build has too).
def on(v):
    return v.upper() in ("ON", "1", "TRUE", "YES")
if on(config.fatlink_sanitize) or on(config.fatlink_tsan):
    config.available_features.add("asan")
if on(config.fatlink_tsan):
    config.available_features.add("tsan")

# The CUDA toolkit (not a Debian package) where it is installed.
cuda = os.environ.get("FATLINK_CUDA_PATH", "/usr/local/cuda")
if all(os.access(os.path.join(cuda, "bin", t), os.X_OK)
       for t in ("nvlink", "fatbinary", "ptxas")):
    config.available_features.add("cuda")
    # An NVIDIA GPU to run the CUDA programs on.
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          timeout=30).returncode == 0:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.TimeoutExpired):
        pass

# LLVM 22's OpenMP device runtime (Debian ships none for GPUs), built from
# LLVM's sources beside the repository; tests of OpenMP GPU links need it.
ompdev = os.environ.get("FATLINK_OMP_DEVICERTL", os.path.join(
    config.fatlink_src_root, "..", "shared", "reference", "omp-devicertl"))
if os.path.exists(os.path.join(ompdev, "libomptarget-nvptx.bc")):
    config.available_features.add("omp-devicertl")

# Slurm and munge (Debian's slurm-wlm, munge) for a one-node cluster the
# test starts; its daemons run as root, as in CI.
if os.geteuid() == 0 and all(shutil.which(t) for t in
                             ("slurmctld", "slurmd", "srun", "munged")):
    config.available_features.add("slurm")

# A small tmpfs in a mount namespace of our own (disk-full tests).
try:
    if subprocess.run(["unshare", "-rm", "sh", "-c",
                       "mount -t tmpfs -o size=8k tmpfs /mnt"],
                      capture_output=True, timeout=30).returncode == 0:
        config.available_features.add("tmpfs")
except (OSError, subprocess.TimeoutExpired):
    pass

# %shared: objects many tests read, compiled once per build
# (test/CMakeLists.txt); a test copies what it links into %t.
bindir = config.fatlink_bin_dir
inputs = os.path.join(config.test_source_root, "Inputs")
config.substitutions += [
    ("%fatlink", os.path.join(bindir, "fatlink")),
    ("%fatpack", os.path.join(bindir, "fatpack")),
    ("%bindir", bindir),
    ("%objroot", config.fatlink_obj_root),
    ("%libexec", os.path.join(os.path.dirname(bindir), "libexec", "fatlink")),
    ("%cuda", cuda),
    ("%ompdev", ompdev),
    ("%clangxx", os.path.join(config.llvm_tools_dir, "clang++")),
    ("%clang", os.path.join(config.llvm_tools_dir, "clang")),
    ("%upstream", os.path.join(config.llvm_tools_dir, "clang-linker-wrapper")),
    ("%sycl_rt", os.path.join(config.fatlink_src_root, "test", "runtime",
                              "sycl_rt.c")),
    ("%inputs", inputs),
    ("%shared", config.test_inputs),
    ("%python", config.python_executable),
    ("%ld", "/usr/bin/ld"),
    ("%llvm_lib", config.llvm_lib_dir),
    ("%test_icd", config.test_icd),
]

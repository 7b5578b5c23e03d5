# jobserver.mk: three SYCL programs linked by fatlink at once under make -jN
# (jobserver.test): CXX is clang++-22, BINDIR fatlink's.
all: p1 p2 p3

# Marked +: make passes its jobserver to the links.
p%:
	+$(CXX) -fsycl -B $(BINDIR) main.o app.o lib.o rt.o -o $@ -Wl,--sycl-module-split-mode=per_kernel \
	  -Wl,--wrapper-jobs=8 -Wl,--parallel-link-sycl=4 -Wl,--wrapper-time-trace=$@.trace \
	  -Wl,--wrapper-time-trace-granularity=0

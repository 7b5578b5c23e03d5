// Just enough SYCL for clang-22's kernel entry points: a kernel is the
// function template below instantiated with a kernel name type.
template <typename Name, typename Fn>
[[clang::sycl_kernel_entry_point(Name)]] void single_task(Fn f) { f(); }

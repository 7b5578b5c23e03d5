// The table var.cpp uses, defined in this unit's device code too.
extern const float table[4];
extern const float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
[[clang::sycl_external]] float tab_at(int i) { return table[i]; }

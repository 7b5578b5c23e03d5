; The module DPC++'s clang-offload-wrapper writes for two FPGA binaries
; (-kind=sycl -target=fpga_aocx-intel-unknown --emit-reg-funcs=0), which
; DPC++ archives beside them in bundle entries host-fpga_aocx-intel-unknown
; and reads back with --sym-prop-bc-files. There is no DPC++ here: this is
; written by hand after the wrapper's public layout (device image struct
; version 2, offload entries {addr, name, size, flags, reserved}, property
; sets {name, begin, end}, properties {name, value, type, size}).
; Image 0: kernels _ZTS2KA _ZTS2KB, three property sets (an all-zero byte
; array among them); image 1: kernel _ZTS2KC, no property sets.
target triple = "x86_64-unknown-linux-gnu"

%__tgt_offload_entry = type { ptr, ptr, i64, i32, i32 }
%_pi_device_binary_property_struct = type { ptr, ptr, i32, i64 }
%_pi_device_binary_property_set_struct = type { ptr, ptr, ptr }
%__tgt_device_image = type { i16, i8, i8, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }
%__tgt_bin_desc = type { i16, i16, ptr, ptr, ptr }

@.sycl_offloading.target.0 = internal unnamed_addr constant [24 x i8] c"fpga_aocx-intel-unknown\00"
@.sycl_offloading.opts.compile.0 = internal unnamed_addr constant [1 x i8] zeroinitializer
@.sycl_offloading.opts.link.0 = internal unnamed_addr constant [1 x i8] zeroinitializer
@prop = internal unnamed_addr constant [8 x i8] c"aspects\00"
@prop_val = internal unnamed_addr constant [8 x i8] zeroinitializer
@__sycl_offload_prop_sets_arr = internal constant [1 x %_pi_device_binary_property_struct] [%_pi_device_binary_property_struct { ptr @prop, ptr @prop_val, i32 2, i64 8 }]
@SYCL_PropSetName = internal unnamed_addr constant [25 x i8] c"SYCL/device requirements\00"
@prop.1 = internal unnamed_addr constant [8 x i8] c"_ZTS2KA\00"
@prop_val.2 = internal unnamed_addr constant [9 x i8] c"\02\00\00\00\00\00\00\00\00"
@__sycl_offload_prop_sets_arr.3 = internal constant [1 x %_pi_device_binary_property_struct] [%_pi_device_binary_property_struct { ptr @prop.1, ptr @prop_val.2, i32 2, i64 9 }]
@SYCL_PropSetName.4 = internal unnamed_addr constant [22 x i8] c"SYCL/kernel param opt\00"
@prop.5 = internal unnamed_addr constant [9 x i8] c"optLevel\00"
@__sycl_offload_prop_sets_arr.6 = internal constant [1 x %_pi_device_binary_property_struct] [%_pi_device_binary_property_struct { ptr @prop.5, ptr null, i32 1, i64 2 }]
@SYCL_PropSetName.7 = internal unnamed_addr constant [21 x i8] c"SYCL/misc properties\00"
@__sycl_offload_prop_sets_arr.8 = internal constant [3 x %_pi_device_binary_property_set_struct] [
  %_pi_device_binary_property_set_struct { ptr @SYCL_PropSetName, ptr @__sycl_offload_prop_sets_arr, ptr getelementptr inbounds ([1 x %_pi_device_binary_property_struct], ptr @__sycl_offload_prop_sets_arr, i64 0, i64 1) },
  %_pi_device_binary_property_set_struct { ptr @SYCL_PropSetName.4, ptr @__sycl_offload_prop_sets_arr.3, ptr getelementptr inbounds ([1 x %_pi_device_binary_property_struct], ptr @__sycl_offload_prop_sets_arr.3, i64 0, i64 1) },
  %_pi_device_binary_property_set_struct { ptr @SYCL_PropSetName.7, ptr @__sycl_offload_prop_sets_arr.6, ptr getelementptr inbounds ([1 x %_pi_device_binary_property_struct], ptr @__sycl_offload_prop_sets_arr.6, i64 0, i64 1) }]
@.sycl_offloading.0.data = internal unnamed_addr constant [13 x i8] c"pseudo-aocx-0", section "__CLANG_OFFLOAD_BUNDLE__sycl-fpga_aocx-intel-unknown"
@__sycl_offload_entry_name = internal unnamed_addr constant [8 x i8] c"_ZTS2KA\00"
@__sycl_offload_entry_name.9 = internal unnamed_addr constant [8 x i8] c"_ZTS2KB\00"
@__sycl_offload_entries_arr = internal constant [2 x %__tgt_offload_entry] [
  %__tgt_offload_entry { ptr null, ptr @__sycl_offload_entry_name, i64 0, i32 0, i32 0 },
  %__tgt_offload_entry { ptr null, ptr @__sycl_offload_entry_name.9, i64 0, i32 0, i32 0 }]

@.sycl_offloading.target.1 = internal unnamed_addr constant [24 x i8] c"fpga_aocx-intel-unknown\00"
@.sycl_offloading.opts.compile.1 = internal unnamed_addr constant [1 x i8] zeroinitializer
@.sycl_offloading.opts.link.1 = internal unnamed_addr constant [1 x i8] zeroinitializer
@.sycl_offloading.1.data = internal unnamed_addr constant [13 x i8] c"pseudo-aocx-1", section "__CLANG_OFFLOAD_BUNDLE__sycl-fpga_aocx-intel-unknown"
@__sycl_offload_entry_name.10 = internal unnamed_addr constant [8 x i8] c"_ZTS2KC\00"
@__sycl_offload_entries_arr.11 = internal constant [1 x %__tgt_offload_entry] [
  %__tgt_offload_entry { ptr null, ptr @__sycl_offload_entry_name.10, i64 0, i32 0, i32 0 }]

@.sycl_offloading.device_images = internal unnamed_addr constant [2 x %__tgt_device_image] [
  %__tgt_device_image { i16 2, i8 4, i8 1, ptr @.sycl_offloading.target.0, ptr @.sycl_offloading.opts.compile.0, ptr @.sycl_offloading.opts.link.0, ptr null, ptr null, ptr @.sycl_offloading.0.data, ptr getelementptr inbounds ([13 x i8], ptr @.sycl_offloading.0.data, i64 0, i64 13), ptr @__sycl_offload_entries_arr, ptr getelementptr inbounds ([2 x %__tgt_offload_entry], ptr @__sycl_offload_entries_arr, i64 0, i64 2), ptr @__sycl_offload_prop_sets_arr.8, ptr getelementptr inbounds ([3 x %_pi_device_binary_property_set_struct], ptr @__sycl_offload_prop_sets_arr.8, i64 0, i64 3) },
  %__tgt_device_image { i16 2, i8 4, i8 1, ptr @.sycl_offloading.target.1, ptr @.sycl_offloading.opts.compile.1, ptr @.sycl_offloading.opts.link.1, ptr null, ptr null, ptr @.sycl_offloading.1.data, ptr getelementptr inbounds ([13 x i8], ptr @.sycl_offloading.1.data, i64 0, i64 13), ptr @__sycl_offload_entries_arr.11, ptr getelementptr inbounds ([1 x %__tgt_offload_entry], ptr @__sycl_offload_entries_arr.11, i64 0, i64 1), ptr null, ptr null }]
@.sycl_offloading.descriptor = internal constant %__tgt_bin_desc { i16 1, i16 2, ptr @.sycl_offloading.device_images, ptr null, ptr null }

"""The native C++ rules of Bazel 4.2.3, under the names rules_cc exports.

Debian ships no rules_cc that this Bazel can load, and nothing can be
downloaded, so the course re-exports the built-in rules. Nothing else is
needed by the auto-configured C++ toolchain or by the course's BUILD files.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite

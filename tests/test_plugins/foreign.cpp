// A shared library that is not a dptune plugin (no "dptune" section): skipped silently in folders.
extern "C" __attribute__((visibility("default"))) int dptune_test_foreign_function(int x) {
  return x + 1;
}

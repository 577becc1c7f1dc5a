// A stand-in for libcuflash_roofline_inject.so in the unit tests: what `profile --injection`
// checks for (an ELF shared object exporting InitializeInjection), and nothing else.
extern "C" int InitializeInjection() {
  return 1;
}

# Sourced by the scripts that configure a build: CMake's Ninja generator when
# ninja is installed (scripts/install-deps.sh installs it), unless
# CMAKE_GENERATOR says otherwise. Ninja starts a target's compiles as soon as
# their own inputs exist, where Make first waits for every target it links:
# a clean sanitizer build took 205 s with Ninja and about 290 s with Make on
# the 2-core VM, mostly the test programs and the CLI waiting for the
# library. A build directory keeps the generator it was configured with.
if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then
  export CMAKE_GENERATOR=Ninja
fi

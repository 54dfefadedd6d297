// The translation unit that carries the tests' precompiled header
// (tests/CMakeLists.txt, extshuffle_test_pch); it defines nothing.

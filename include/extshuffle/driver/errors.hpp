// Moved to extshuffle/errors.hpp (below every layer); this forward goes when
// the last include of it does.
#pragma once

#include "extshuffle/errors.hpp"

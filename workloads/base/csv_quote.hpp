#pragma once
// Writing CSV fields (defined in text.cpp).
#include <string>

namespace fleetsim {

/// A CSV field: as is, or quoted (inner quotes doubled) when it holds a comma, quote or line break.
std::string csv_quote(const std::string& s);

}  // namespace fleetsim

#pragma once
// Small text helpers shared by readers, config and CLI.
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::vector<std::string> split(std::string_view s, char sep);
std::string_view trim(std::string_view s);
std::string lower(std::string_view s);
/// Levenshtein distance (case-insensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `name` if it is plausibly a typo of it, else "".
std::string closest(std::string_view name, const std::vector<std::string>& candidates);
/// Strict number parsing: the whole field must be a finite number. Throws InputError naming file/line/field.
double parse_double(std::string_view text, const std::string& file, long line, const std::string& field);
long long parse_int(std::string_view text, const std::string& file, long line, const std::string& field);
/// parse_int for a value stored as int: one outside int's range is an InputError, never a wrapped cast.
int parse_int32(std::string_view text, const std::string& file, long line, const std::string& field);
/// `v` as int, or an InputError naming file/line/field when it does not fit (a double is truncated first).
int to_int32(double v, const std::string& file, long line, const std::string& field);
/// Format a double with up to `digits` decimals, trailing zeros stripped; deterministic across runs.
std::string fmt(double v, int digits = 6);

}  // namespace fleetsim

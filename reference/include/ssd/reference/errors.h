// The suite's error type: every rejected argument names itself and what was wrong with it.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace ssd {

// Thrown by public functions for bad input. what() reads "argument '<name>': <problem>", prefixed
// with the operation's name where one applies ("chunk_state: argument 'x': ...").
class ArgumentError : public std::invalid_argument {
 public:
  ArgumentError(std::string_view argument, const std::string& problem);
  ArgumentError(std::string_view op, std::string_view argument, const std::string& problem);
  const std::string& argument() const { return argument_; }

 private:
  std::string argument_;
};

}  // namespace ssd

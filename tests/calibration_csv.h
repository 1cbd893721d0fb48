// Reading data/calibration files in tests: CSV tables under leading '#' lines naming their source.
#pragma once

#include <sstream>
#include <string>

#include "core/csv.h"

namespace stepcast::testing {

inline core::CsvTable read_calibration(const std::string& file) {
  const std::string path = STEPCAST_SOURCE_DIR "/data/calibration/" + file;
  std::istringstream lines(core::read_file(path));
  std::string line, kept;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != '#') kept += line + "\n";
  }
  return core::read_csv(path, kept);
}

}  // namespace stepcast::testing

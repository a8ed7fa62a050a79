// Progress report for long jobs: a redrawn bar with bytes (or other units) done, rate and ETA on a
// terminal, plain lines (at most one every few seconds) when stderr is not a terminal.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace minimax {

class Progress {
 public:
  // `unit` empty: the amounts are bytes ("1.50 GiB"); else counts of it ("1200 / 5000 tokens").
  Progress(std::string label, uint64_t total, std::string unit = "");
  ~Progress();
  void add(uint64_t bytes);
  void finish();
  // Nothing is drawn before `delay` has passed, so that a job that ends sooner (a small model, a
  // test fixture) prints nothing at all.
  void show_after(std::chrono::milliseconds delay);

 private:
  void draw(bool final);

  std::string amount(double value) const;

  std::string label_, unit_;
  uint64_t total_, done_ = 0;
  bool tty_;
  bool finished_ = false, drawn_ = false;
  std::chrono::milliseconds delay_{0};
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::mutex mutex_;
};

// "1.50 GiB", "12.0 MiB", "512 B".
std::string format_bytes(double bytes);

// The terminal line "[####....] text" for `frac` done, in at most `columns` - 1 characters (a
// line as wide as the terminal wraps on some terminals, and every redraw then prints a new line):
// the bar shrinks from 30 to 10 cells first, then the text is cut. columns <= 0: unknown (80).
std::string progress_line(double frac, const std::string& text, int columns);

// A command that shows several bars one after another (make-tiny --format mxfp4 writes the BF16
// checkpoint, then quantizes it) numbers them, so that the second bar does not read as a restart:
// while a ProgressStep lives, every bar started is labeled "step N/M <label>". One at a time, from
// the command's own thread.
class ProgressStep {
 public:
  ProgressStep(int step, int steps);
  ~ProgressStep();
  ProgressStep(const ProgressStep&) = delete;
  ProgressStep& operator=(const ProgressStep&) = delete;
};

// `label` as a bar started now shows it: "step 1/2 make-tiny" inside ProgressStep(1, 2).
std::string progress_label(const std::string& label);

}  // namespace minimax

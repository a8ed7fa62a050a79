// Progress: terminal bar or periodic plain lines.
#include "base/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "base/clock.h"
#include "base/log.h"

namespace minimax {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

namespace {
int current_step = 0, current_steps = 0;  // the live ProgressStep's; 0: none
}  // namespace

ProgressStep::ProgressStep(int step, int steps) {
  current_step = step;
  current_steps = steps;
}

ProgressStep::~ProgressStep() { current_step = current_steps = 0; }

std::string progress_label(const std::string& label) {
  if (current_steps == 0) return label;
  return fmt::format("step {}/{} {}", current_step, current_steps, label);
}

Progress::Progress(std::string label, uint64_t total, std::string unit)
    : label_(progress_label(label)),
      unit_(std::move(unit)),
      total_(total),
      tty_(::isatty(STDERR_FILENO) == 1) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

Progress::~Progress() {
  if (tty_ && drawn_ && !finished_) std::fputc('\n', stderr);
}

void Progress::show_after(std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mutex_);
  delay_ = delay;
}

void Progress::add(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ += bytes;
  auto now = std::chrono::steady_clock::now();
  auto interval = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
  if (now - last_draw_ >= interval && now - start_ >= delay_) {
    last_draw_ = now;
    draw(false);
  }
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!drawn_ && std::chrono::steady_clock::now() - start_ < delay_) return;
  draw(true);
}

std::string Progress::amount(double value) const {
  return unit_.empty() ? format_bytes(value) : fmt::format("{:.0f} {}", value, unit_);
}

std::string progress_line(double frac, const std::string& text, int columns) {
  if (columns <= 0) columns = 80;
  const int room = columns - 1;
  const int text_width = static_cast<int>(text.size());
  // "[" + bar + "] " + text
  const int width = std::clamp(room - 3 - text_width, 10, 30);
  const int filled = static_cast<int>(std::clamp(frac, 0.0, 1.0) * width);
  std::string line =
      "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + text;
  if (static_cast<int>(line.size()) > room) line.resize(std::max(room, 0));
  return line;
}

void Progress::draw(bool final) {
  drawn_ = true;
  double secs = seconds_since(start_);
  double rate = secs > 0 ? done_ / secs : 0.0;
  // Capped: a total that was an estimate may be passed.
  double frac = total_ > 0 ? std::min(1.0, static_cast<double>(done_) / total_) : 1.0;
  double eta = rate > 0 && total_ > done_ ? (total_ - done_) / rate : 0.0;
  std::string text = fmt::format("{} {:5.1f}% {} / {} at {}/s, ETA {:.0f} s", label_, 100.0 * frac,
                                 amount(done_), amount(total_), amount(rate), eta);
  if (tty_) {
    winsize size{};
    const int columns = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
    std::fprintf(stderr, "\r%s\033[K%s", progress_line(frac, text, columns).c_str(),
                 final ? "\n" : "");
  } else {
    // Not a terminal: a log file, so a log line (a timestamp, and JSON under --log-format json).
    log_info("{}", text);
    return;
  }
  std::fflush(stderr);
}

}  // namespace minimax

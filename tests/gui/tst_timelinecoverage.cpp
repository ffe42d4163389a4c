// TimelineWidget after issue 22: merged items drawn by coverage (bar height = busy fraction per
// pixel column, against a hand computation from the kernels written), lanes and headers per
// process on a synthetic two-process capture, the device-memory lane without the memory of
// processes that ended, and drag-to-zoom and the wheel step.

#include <QApplication>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "CaptureData.h"
#include "TempDir.h"
#include "fuselens/db/Writer.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

constexpr std::int64_t kT0 = 1'000'000;    // first record
constexpr std::int64_t kColumnNs = 1'000;  // the view's ns per pixel column in the coverage test

/// A kernel record of `pid` on device 0 / `stream` at [start, end), launched by a
/// cudaLaunchKernel call of (pid, tid) 100 ns before.
void addKernel(db::RecordBatch& batch, std::uint32_t pid, std::uint32_t tid, std::uint32_t stream,
               std::int64_t start, std::int64_t end, std::uint32_t& correlation) {
  db::ApiCallRecord a;
  a.pid = pid;
  a.tid = tid;
  a.name = "cudaLaunchKernel";
  a.start_ns = static_cast<std::uint64_t>(start - 100);
  a.end_ns = static_cast<std::uint64_t>(start - 90);
  a.correlation_id = correlation;
  batch.api_calls.push_back(a);
  db::KernelRecord k;
  k.pid = pid;
  k.stream_id = stream;
  k.correlation_id = correlation++;
  k.start_ns = static_cast<std::uint64_t>(start);
  k.end_ns = static_cast<std::uint64_t>(end);
  k.mangled_name = "k";
  batch.kernels.push_back(k);
}

db::MemoryEventRecord memoryEvent(std::uint32_t pid, std::int64_t t, std::int64_t bytes) {
  db::MemoryEventRecord m;
  m.pid = pid;
  m.timestamp_ns = static_cast<std::uint64_t>(t);
  m.operation = bytes >= 0 ? db::MemoryOperation::Allocation : db::MemoryOperation::Release;
  m.memory_kind = db::MemoryKind::Device;
  m.bytes = static_cast<std::uint64_t>(std::llabs(bytes));
  return m;
}

void writeCapture(const std::string& path, const db::RecordBatch& batch,
                  const std::vector<db::ProcessInfo>& processes,
                  const std::vector<db::ThreadInfo>& threads = {}) {
  db::RunInfo run;
  run.command_line = {"timeline-coverage"};
  auto writer = db::Writer::create(path, run);
  for (const auto& p : processes) writer.write_process(p);
  if (!threads.empty()) writer.write_threads(threads);
  writer.write(batch);
  writer.finalize({});
}

db::ProcessInfo process(std::uint32_t pid, std::optional<std::uint64_t> end_ns = std::nullopt) {
  db::ProcessInfo p;
  p.pid = pid;
  p.end_utc_ns = end_ns;  // clock_offset_ns 0: UTC = CUPTI time
  return p;
}

int laneIndex(const analyzer::Timeline& t, const std::string& title) {
  for (std::size_t i = 0; i < t.lanes.size(); ++i) {
    if (t.lanes[i].title == title) return static_cast<int>(i);
  }
  return -1;
}

/// The highest sum over processes of their device-memory totals, each process's dropped after
/// `end` of it: the figure the memory lane must reach, from the events written.
std::int64_t expectedPeak(const std::vector<db::MemoryEventRecord>& events,
                          const std::map<std::uint32_t, std::int64_t>& end) {
  std::vector<std::int64_t> times;
  for (const auto& e : events) times.push_back(static_cast<std::int64_t>(e.timestamp_ns));
  std::int64_t peak = 0;
  for (const std::int64_t t : times) {
    std::int64_t sum = 0;
    for (const auto& e : events) {
      const auto pid = e.pid;
      if (static_cast<std::int64_t>(e.timestamp_ns) > t || end.at(pid) < t) continue;
      sum += e.operation == db::MemoryOperation::Allocation ? static_cast<std::int64_t>(e.bytes)
                                                            : -static_cast<std::int64_t>(e.bytes);
    }
    peak = std::max(peak, sum);
  }
  return peak;
}

}  // namespace

class TestTimelineCoverage : public QObject {
  Q_OBJECT

 private:
  test::TempDir dir_;

 private Q_SLOTS:
  void mergedKernelsAreDrawnByTheirCoverage() {
    // Kernels of 150 ns every 700 ns (busy ~21 %, each well under a pixel of 1000 ns), then a
    // dense stretch of 400 ns kernels every 450 ns (~89 %).
    db::RecordBatch batch;
    std::uint32_t correlation = 1;
    std::vector<std::pair<std::int64_t, std::int64_t>> kernels;
    for (int i = 0; i < 60; ++i) kernels.push_back({kT0 + 100 + i * 700, kT0 + 250 + i * 700});
    const std::int64_t dense = kT0 + 100 + 60 * 700;
    for (int i = 0; i < 60; ++i) kernels.push_back({dense + i * 450, dense + i * 450 + 400});
    for (const auto& [a, b] : kernels) addKernel(batch, 7, 7, 7, a, b, correlation);
    const auto path = dir_.file("coverage.sqlite");
    writeCapture(path, batch, {process(7)});
    const auto data = loadCapture(QString::fromStdString(path));
    QVERIFY(data);
    data->window.reset();  // no shading outside a window over the pixels the test reads

    TimelineWidget widget;
    widget.resize(900, 400);
    widget.setCapture(data);
    const int lane = laneIndex(data->timeline, "GPU 0 · stream 7");
    QVERIFY(lane >= 0);
    const int width = static_cast<int>(
        std::lround(widget.xForTime(widget.viewEnd()) - widget.xForTime(widget.viewStart())));
    widget.setView(static_cast<double>(kT0), static_cast<double>(kT0 + width * kColumnNs));
    const std::vector<double> coverage = widget.coverage(lane);
    QCOMPARE(static_cast<int>(coverage.size()), width);
    // By hand: each column's overlap with every kernel written.
    int partial = 0;
    for (int c = 0; c < width; ++c) {
      const std::int64_t from = kT0 + c * kColumnNs, to = from + kColumnNs;
      std::int64_t busy = 0;
      for (const auto& [a, b] : kernels)
        busy += std::max<std::int64_t>(0, std::min(b, to) - std::max(a, from));
      const double expected = std::min(1.0, static_cast<double>(busy) / kColumnNs);
      QVERIFY2(std::abs(coverage[static_cast<std::size_t>(c)] - expected) < 1e-12,
               qPrintable(QStringLiteral("column %1: %2 vs %3")
                              .arg(c)
                              .arg(coverage[static_cast<std::size_t>(c)])
                              .arg(expected)));
      if (expected > 0 && expected < 0.5) ++partial;
    }
    QVERIFY(partial > 20);  // the sparse stretch is drawn low, not solid

    // The drawing: in each column the merged colour fills the bottom fraction of the row.
    QImage image(widget.size(), QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    widget.paintTimeline(painter, image.rect());
    painter.end();
    QVERIFY(widget.lastPaintStats().blocks > 0);
    const int rowCenter = widget.rowCenterY(lane);
    const int rowTop = rowCenter - TimelineWidget::kRowHeight / 2 + 1;
    const int barSpace = TimelineWidget::kRowHeight - 2;
    const int left = static_cast<int>(std::lround(widget.xForTime(widget.viewStart())));
    const QColor merged(0x4a, 0x6f, 0x96);
    int checked = 0;
    const QColor grid(0xdd, 0xe0, 0xe5);  // the ruler's tick lines cross the lanes
    for (int c = 1; c + 1 < width; ++c) {
      const double f = coverage[static_cast<std::size_t>(c)];
      int filled = 0;
      bool tick = false;
      for (int yy = rowTop; yy < rowTop + barSpace; ++yy) {
        if (image.pixelColor(left + c, yy) == merged) ++filled;
        if (image.pixelColor(left + c, yy) == grid) tick = true;
      }
      if (tick) continue;
      const double expected = f > 0 ? std::max(1.0, f * barSpace) : 0.0;
      QVERIFY2(
          std::abs(filled - expected) <= 1.0,
          qPrintable(QStringLiteral("column %1: %2 px for coverage %3").arg(c).arg(filled).arg(f)));
      ++checked;
    }
    QVERIFY(checked > 100);
  }

  void severalProcessesGetTheirOwnLanesAndHeaders() {
    // Two processes launching on the same device and stream, each from two named threads.
    db::RecordBatch batch;
    std::uint32_t correlation = 1;
    std::map<std::uint32_t, int> written;
    for (int i = 0; i < 10; ++i) {
      for (const std::uint32_t pid : {100U, 200U}) {
        const std::uint32_t tid = pid + 1 + static_cast<std::uint32_t>(i % 2);
        const std::int64_t start = kT0 + i * 10'000 + (pid == 200 ? 5'000 : 0);
        addKernel(batch, pid, tid, 7, start, start + 2'000, correlation);
        ++written[pid];
      }
    }
    const auto path = dir_.file("two_processes.sqlite");
    writeCapture(path, batch, {process(100), process(200)},
                 {{100, 101, "python3"}, {100, 102, "pt_autograd_0"}, {200, 201, "worker"}});
    const auto data = loadCapture(QString::fromStdString(path));
    QVERIFY(data);
    const auto& t = data->timeline;
    QVERIFY(t.several_processes);
    QVERIFY(!t.has_ranks);
    TimelineWidget widget;
    widget.resize(1000, 700);
    widget.setCapture(data);
    QStringList titles;
    for (const auto& title : widget.trackTitles()) {
      if (!title.startsWith(QStringLiteral("Steps (")) && !title.isEmpty() &&
          !title.startsWith(QStringLiteral("GPU 0 memory")))
        titles << title;
    }
    const QStringList expected = {QStringLiteral("Process 100"),
                                  QStringLiteral("pid 100 · GPU 0 · stream 7"),
                                  QStringLiteral("pid 100 · CUDA API · thread 101 (python3)"),
                                  QStringLiteral("pid 100 · CUDA API · thread 102 (pt_autograd_0)"),
                                  QStringLiteral("Process 200"),
                                  QStringLiteral("pid 200 · GPU 0 · stream 7"),
                                  QStringLiteral("pid 200 · CUDA API · thread 201 (worker)"),
                                  QStringLiteral("pid 200 · CUDA API · thread 202")};
    QCOMPARE(titles, expected);
    for (const std::uint32_t pid : {100U, 200U}) {
      const int lane = laneIndex(t, "pid " + std::to_string(pid) + " · GPU 0 · stream 7");
      QVERIFY(lane >= 0);
      const auto& items = t.lanes[static_cast<std::size_t>(lane)].rows.at(0).items;
      QCOMPARE(static_cast<int>(items.size()), written[pid]);
      for (const auto& item : items) QCOMPARE(t.kernels[item.detail].pid, pid);
    }
  }

  void memoryLaneDropsTheMemoryOfProcessesThatEnded() {
    // Process 100 allocates 4 MB and never frees it; its last record is a kernel ending at
    // kT0 + 10 µs. Process 200 allocates 3 MB after that, then 1 MB more.
    for (const bool exitRecorded : {false, true}) {
      db::RecordBatch batch;
      std::uint32_t correlation = 1;
      addKernel(batch, 100, 100, 7, kT0 + 5'000, kT0 + 10'000, correlation);
      addKernel(batch, 200, 200, 7, kT0 + 30'000, kT0 + 60'000, correlation);
      batch.memory_events = {memoryEvent(100, kT0 + 1'000, 4'000'000),
                             memoryEvent(200, kT0 + 20'000, 3'000'000),
                             memoryEvent(200, kT0 + 25'000, 1'000'000)};
      // Recorded exit of 100 after 200's first allocation: 100's memory is still held then.
      const std::int64_t exit100 = kT0 + 22'000;
      const auto path = dir_.file(exitRecorded ? "memory_exit.sqlite" : "memory.sqlite");
      writeCapture(
          path, batch,
          {process(100, exitRecorded ? std::optional<std::uint64_t>(exit100) : std::nullopt),
           process(200)});
      const auto data = loadCapture(QString::fromStdString(path));
      QVERIFY(data);
      const auto& t = data->timeline;
      QCOMPARE(t.counters.size(), std::size_t{1});
      // Ends from the rows: 100's last record (or its recorded exit), 200 lives to the end.
      std::int64_t last100 = 0;
      for (std::size_t i = 0; i < batch.kernels.size(); ++i) {
        if (batch.kernels[i].pid == 100)
          last100 =
              std::max<std::int64_t>(last100, static_cast<std::int64_t>(batch.kernels[i].end_ns));
      }
      const std::map<std::uint32_t, std::int64_t> ends = {
          {100, exitRecorded ? std::max(last100, exit100) : last100}, {200, INT64_MAX}};
      const std::int64_t peak = expectedPeak(batch.memory_events, ends);
      QCOMPARE(t.counters[0].max_value, peak);
      std::int64_t everything = 0;
      for (const auto& e : batch.memory_events) everything += static_cast<std::int64_t>(e.bytes);
      if (exitRecorded) {
        QCOMPARE(peak, std::int64_t{7'000'000});  // 4 MB + 3 MB before 100 exits
      } else {
        QVERIFY(peak < everything);  // the 8 MB that a sum over every process reaches
      }
      // After 100's end the lane holds only what 200 holds.
      const auto& points = t.counters[0].points;
      QVERIFY(!points.empty());
      QCOMPARE(points.back().value, std::int64_t{4'000'000});
    }
  }

  void dragOnTheRulerZoomsToTheBand() {
    db::RecordBatch batch;
    std::uint32_t correlation = 1;
    for (int i = 0; i < 100; ++i)
      addKernel(batch, 7, 7, 7, kT0 + i * 10'000, kT0 + i * 10'000 + 3'000, correlation);
    const auto path = dir_.file("zoom.sqlite");
    writeCapture(path, batch, {process(7)});
    const auto data = loadCapture(QString::fromStdString(path));
    TimelineWidget widget;
    widget.resize(1000, 400);
    widget.setCapture(data);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    const double startView = widget.viewStart(), endView = widget.viewEnd();
    const int x1 = TimelineWidget::kGutterWidth + 200, x2 = TimelineWidget::kGutterWidth + 500;
    const int y = TimelineWidget::kRulerHeight / 2;
    const double areaWidth = widget.xForTime(endView) - widget.xForTime(startView);
    const auto nsAt = [&](int x) {
      return startView + (x - TimelineWidget::kGutterWidth) * (endView - startView) / areaWidth;
    };
    QTest::mousePress(&widget, Qt::LeftButton, {}, QPoint(x1, y));
    QMouseEvent move(QEvent::MouseMove, QPointF(x2, y), widget.mapToGlobal(QPointF(x2, y)),
                     Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&widget, &move);
    QTest::mouseRelease(&widget, Qt::LeftButton, {}, QPoint(x2, y));
    QVERIFY(std::abs(widget.viewStart() - nsAt(x1)) < 1.0);
    QVERIFY(std::abs(widget.viewEnd() - nsAt(x2)) < 1.0);
    QVERIFY(widget.selectedItem() == nullptr);  // a drag, not a click

    // A wheel notch halves the span around the cursor; Ctrl takes the fine step.
    const double span = widget.viewEnd() - widget.viewStart();
    const QPointF at(TimelineWidget::kGutterWidth + 300, 200);
    QWheelEvent wheel(at, widget.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&widget, &wheel);
    QVERIFY(std::abs((widget.viewEnd() - widget.viewStart()) - span * TimelineWidget::kWheelZoom) <
            1e-6 * span);
    // From the whole capture to one kernel period (10 µs of ~1 ms) in a few notches.
    widget.zoomAll();
    const double whole = widget.viewEnd() - widget.viewStart();
    int notches = 0;
    while (widget.viewEnd() - widget.viewStart() > 10'000 && notches < 100) {
      QWheelEvent in(at, widget.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                     Qt::NoModifier, Qt::NoScrollPhase, false);
      QApplication::sendEvent(&widget, &in);
      ++notches;
    }
    QVERIFY2(notches <= static_cast<int>(std::ceil(std::log(whole / 10'000) / std::log(2.0))),
             qPrintable(QString::number(notches)));
  }
};

QTEST_MAIN(TestTimelineCoverage)
#include "tst_timelinecoverage.moc"

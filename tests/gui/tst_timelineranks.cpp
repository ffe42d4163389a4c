// TimelineWidget on a two-rank capture (issue 25; tests/support/TwoRankCapture.h): a header per
// rank above its group of lanes, lane titles from the analyzer ("rank 1 · GPU 1 · stream 13"),
// processes without a rank last, clicks landing on the right rank's kernel below the headers, and
// the Timeline page's models consistent (QAbstractItemModelTester) while the selection changes.

#include <QAbstractItemModelTester>
#include <QPainter>
#include <QtTest>

#include "CaptureData.h"
#include "TempDir.h"
#include "TwoRankCapture.h"
#include "models/CallPathModel.h"
#include "views/TimelinePage.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

class TestTimelineRanks : public QObject {
  Q_OBJECT

 private:
  fuselens::test::TempDir dir_;
  CaptureDataPtr ranked_, plain_;

  // Track titles without the step lane (present when the steps analysis found the step ranges).
  static QStringList lanesOnly(const TimelineWidget& widget) {
    QStringList out;
    for (const auto& title : widget.trackTitles()) {
      if (!title.startsWith(QStringLiteral("Steps ("))) out << title;
    }
    return out;
  }

  static int laneIndex(const analyzer::Timeline& t, const std::string& title) {
    for (std::size_t i = 0; i < t.lanes.size(); ++i) {
      if (t.lanes[i].title == title) return static_cast<int>(i);
    }
    return -1;
  }

 private Q_SLOTS:
  void initTestCase() {
    const auto ranked = dir_.file("ranked.sqlite");
    const auto plain = dir_.file("plain.sqlite");
    fuselens::test::write_two_rank_capture(ranked);
    fuselens::test::write_two_rank_capture(plain, /*with_ranks=*/false);
    ranked_ = loadCapture(QString::fromStdString(ranked));
    plain_ = loadCapture(QString::fromStdString(plain));
    QVERIFY(ranked_ && plain_);
  }

  void rankGroupsHaveHeadersAboveTheirLanes() {
    TimelineWidget widget;
    widget.resize(1000, 700);
    widget.setCapture(ranked_);
    const QStringList expected = {QStringLiteral("Rank 0"),
                                  QStringLiteral("rank 0 · GPU 0 · stream 7"),
                                  QStringLiteral("rank 0 · GPU 0 · stream 13"),
                                  QStringLiteral("rank 0 · NVTX · thread 200"),
                                  QStringLiteral("rank 0 · CUDA API · thread 200"),
                                  QStringLiteral("Rank 1"),
                                  QStringLiteral("rank 1 · GPU 0 · stream 7"),
                                  QStringLiteral("rank 1 · GPU 1 · stream 7"),
                                  QStringLiteral("rank 1 · GPU 1 · stream 13"),
                                  QStringLiteral("rank 1 · NVTX · thread 100"),
                                  QStringLiteral("rank 1 · CUDA API · thread 100"),
                                  QStringLiteral("Without rank"),
                                  QStringLiteral("pid 300 · GPU 0 · stream 7"),
                                  QStringLiteral("pid 300 · CUDA API · thread 300")};
    QCOMPARE(lanesOnly(widget), expected);
    QImage image(widget.size(), QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    widget.paintTimeline(painter, QRect(QPoint(0, 0), widget.size()));  // headers paint
    QVERIFY(widget.lastPaintStats().items + widget.lastPaintStats().blocks > 0);
    // FUSELENS_TIMELINE_SCREENSHOT=PATH keeps the picture (for a look at the rank headers).
    if (const QString path = qEnvironmentVariable("FUSELENS_TIMELINE_SCREENSHOT");
        !path.isEmpty()) {
      painter.end();
      QVERIFY(image.save(path));
    }
  }

  void withoutRanksEachProcessHasAHeader() {
    // Issue 22: the same three processes without process_rank rows are grouped by pid.
    TimelineWidget widget;
    widget.resize(1000, 700);
    widget.setCapture(plain_);
    const QStringList titles = lanesOnly(widget);
    QVERIFY(!titles.isEmpty());
    QCOMPARE(titles.first(), QStringLiteral("Process 100"));
    QCOMPARE(titles.at(1), QStringLiteral("pid 100 · GPU 0 · stream 7"));
    QCOMPARE(titles.count(QStringLiteral("Process 200")), 1);
    QCOMPARE(titles.count(QStringLiteral("Process 300")), 1);
    for (const auto& title : titles) {
      QVERIFY2(!title.startsWith(QStringLiteral("Rank ")) &&
                   !title.startsWith(QStringLiteral("rank ")) &&
                   title != QStringLiteral("Without rank"),
               qPrintable(title));
    }
  }

  void clickBelowTheHeadersSelectsThatRanksKernel() {
    TimelinePage page;
    page.resize(1200, 900);
    page.setCaptures(ranked_, {ranked_});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QAbstractItemModelTester tester(page.callPathModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    TimelineWidget* widget = page.timelineWidget();
    const auto& t = ranked_->timeline;
    const int lane = laneIndex(t, "rank 1 · GPU 1 · stream 13");
    QVERIFY(lane >= 0);
    const auto& allreduce = t.lanes[static_cast<std::size_t>(lane)].rows[0].items.at(1);
    widget->reveal(allreduce.start_ns, allreduce.end_ns);
    const double x =
        widget->xForTime(static_cast<double>(allreduce.start_ns + allreduce.end_ns) / 2);
    const int y = widget->rowCenterY(lane);
    QVERIFY(y > 0 && y < widget->height());
    const QPoint at(static_cast<int>(x), y);
    QCOMPARE(widget->itemAt(at), &allreduce);
    QTest::mouseClick(widget, Qt::LeftButton, {}, at);
    QCOMPARE(widget->selectedItem(), &allreduce);
    QVERIFY2(page.detailsText().contains(QStringLiteral("step#1")), qPrintable(page.detailsText()));
    // The same point one lane up is rank 1's device 1 compute stream, not the allreduce.
    const int above = widget->rowCenterY(lane - 1);
    QVERIFY(widget->itemAt(QPoint(static_cast<int>(x), above)) != &allreduce);
    // Switching captures resets the page's models under the tester.
    page.setCaptures(plain_, {ranked_, plain_});
    QCOMPARE(widget->selectedItem(), nullptr);
  }
};

QTEST_MAIN(TestTimelineRanks)
#include "tst_timelineranks.moc"

// Where the time goes (summary.hpp) and `show`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "lib/core/chart/chart.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/core/writers/summary.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

Row launch_row(const std::string& demangled, std::int64_t index, double seconds, double bytes) {
  Row row;
  row.kernel = short_kernel_name(demangled);
  row.spec_key = "h200-sxm";
  KernelLaunch launch;
  launch.mangled_name = "_Z1kv";
  launch.demangled_name = demangled;
  launch.grid = {132, 1, 1};
  launch.block = {256, 1, 1};
  launch.index = index;
  row.launch = launch;
  row.timing = Timing{{seconds}, 0, 0};
  row.counters = {{quantity::kDramRead, bytes / 2},
                  {quantity::kDramWrite, bytes / 2},
                  {quantity::kTensorMmaSync, 0.0}};
  return row;
}

const char* kGelu =
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)#1}, "
    "std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)#1}, "
    "std::array<char*, 2ul>)";
const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::(anonymous namespace)::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
    "at::native::(anonymous namespace)::CUDAFunctor_add<float>, std::array<char*, 3ul>)";

Report program() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  Report report;
  report.context = make_context("profile");
  report.specs.push_back(registry.find("h200"));
  // GELU: 3 launches of 100 us moving 240 MB each (a 50 us floor at 4.8 TB/s); add: one of
  // 100 us moving 480 MB (its floor); a GEMM of 200 us with no bytes counted.
  for (int i = 0; i < 3; ++i) report.rows.push_back(launch_row(kGelu, i, 100e-6, 240e6));
  report.rows.push_back(launch_row(kAdd, 3, 100e-6, 480e6));
  return report;
}

// A graph launch's row of `nodes` nodes that took `seconds`, and its kernel node `position`
// (an `add` of 100 us), as `profile` writes them.
Row graph_launch_row(int nodes, double seconds) {
  Row parent = launch_row("CUDA graph", 4, seconds, 0);
  parent.kernel = "CUDA graph";
  parent.launch->graph = true;
  parent.launch->graph_nodes = nodes;
  parent.counters.clear();
  parent.status = RowStatus::kCountersUnavailable;
  return parent;
}

Row kernel_node_row(int position) {
  Row node = launch_row(kAdd, 4, 100e-6, 480e6);
  node.launch->node_kind = "kernel";
  node.launch->graph_node_id = 10 + position;
  node.launch->node_position = position;
  return node;
}

}  // namespace

TEST_CASE("summary: the functor of a templated kernel tells its instances apart") {
  CHECK(functor_of(kGelu) == "GeluCUDAKernelImpl");
  CHECK(functor_of(kAdd) == "CUDAFunctor_add");
  CHECK(functor_of("void at::native::vectorized_elementwise_kernel<4, "
                   "at::native::FillFunctor<c10::Half>, std::array<char*, 1ul> >(int, ...)") ==
        "FillFunctor");
  CHECK(functor_of("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") == "");
  CHECK(functor_of("void axpy<float, 4>(float, float const*, float*)") == "");
  const Report report = program();
  CHECK(group_key(report.rows[0], GroupBy::kFunctor) ==
        "at::native::vectorized_elementwise_kernel [GeluCUDAKernelImpl]");
  CHECK(group_key(report.rows[0], GroupBy::kName) == "at::native::vectorized_elementwise_kernel");
}

TEST_CASE("summary: shares, floors, headroom and what the program would gain") {
  const Report report = program();
  const Summary by_functor = summarize(report, GroupBy::kFunctor);
  REQUIRE(by_functor.groups.size() == 2);
  CHECK(by_functor.rows == 4);
  CHECK(by_functor.total_seconds == doctest::Approx(400e-6));
  const KernelGroup& gelu = by_functor.groups[0];  // 300 us: first by time
  CHECK(gelu.launches == 3);
  CHECK(gelu.share == doctest::Approx(0.75));
  CHECK(gelu.median_seconds == doctest::Approx(100e-6));
  CHECK(gelu.binding == "DRAM");
  CHECK(gelu.floor_seconds == doctest::Approx(3 * 240e6 / 4.8e12));
  CHECK(gelu.fraction_of_bound == doctest::Approx(0.5));
  CHECK(gelu.headroom_seconds == doctest::Approx(150e-6));
  CHECK(gelu.program_gain == doctest::Approx(150e-6 / 400e-6));
  const KernelGroup& add = by_functor.groups[1];
  CHECK(add.fraction_of_bound == doctest::Approx(1.0));
  CHECK(add.headroom_seconds == doctest::Approx(0).epsilon(1e-12));
  // By name: one group; sorted by gain or launch order the same two functor groups.
  CHECK(summarize(report, GroupBy::kName).groups.size() == 1);
  CHECK(summarize(report, GroupBy::kFunctor, SummarySort::kLaunch).groups[0].key == gelu.key);
  const std::string text = render_summary(by_functor, 1);
  CHECK(text.find("75.0%") != std::string::npos);
  CHECK(text.find("... and 1 more groups, 25.0% of the time") != std::string::npos);
}

TEST_CASE("summary: a graph launch's nodes are summarised, the launch once, overlap stated") {
  Report report = program();
  for (Row& row : report.rows) {  // the plain launches one after another, 1 ms apart
    row.launch->gpu_start_ns = 1'000'000 * (row.launch->index + 1);
    row.launch->gpu_end_ns = row.launch->gpu_start_ns + 100'000;
  }
  // A graph launch of two kernel nodes on parallel branches: 100 us each, 50 us together.
  report.rows.push_back(graph_launch_row(2, 150e-6));
  for (int i = 0; i < 2; ++i) {
    Row node = kernel_node_row(i);
    node.launch->gpu_start_ns = 10'000'000 + 50'000 * i;
    node.launch->gpu_end_ns = node.launch->gpu_start_ns + 100'000;
    report.rows.push_back(node);
  }
  const Summary summary = summarize(report, GroupBy::kFunctor);
  CHECK(summary.rows == 6);  // four launches and two nodes; the graph launch not again
  CHECK(summary.left_out == 0);
  CHECK(summary.graph_launches == 1);
  CHECK(summary.graph_node_rows == 2);
  CHECK(summary.total_seconds == doctest::Approx(600e-6));
  CHECK(summary.interval_seconds == doctest::Approx(600e-6));
  CHECK(summary.busy_seconds == doctest::Approx(550e-6));
  for (const KernelGroup& g : summary.groups) CHECK(g.key.find("graph") == std::string::npos);
  const std::string text = render_summary(summary, 0);
  CHECK(text.find("2 of the launches are nodes of 1 CUDA graph launch,") != std::string::npos);
  CHECK(text.find("GPU busy 550 µs with these kernels; 50.0 µs (8.3%) of their time ran beside "
                  "another's") != std::string::npos);
}

TEST_CASE("summary: the time launches spend before their kernels start is stated") {
  Report report = program();
  for (Row& row : report.rows) {  // 100 us from submission to end, 90 us on the GPU
    row.launch->gpu_start_ns = 1'000'000 * (row.launch->index + 1);
    row.launch->gpu_end_ns = row.launch->gpu_start_ns + 90'000;
  }
  const std::string text = render_summary(summarize(report, GroupBy::kFunctor), 0, 0);
  CHECK(text.find("once per kernel; a launch's time counts from its submission (40.0 µs of it "
                  "came before the kernels started).") != std::string::npos);
  // Within 1% of the kernel time, nothing is said.
  for (Row& row : report.rows) row.launch->gpu_end_ns = row.launch->gpu_start_ns + 99'500;
  CHECK(render_summary(summarize(report, GroupBy::kFunctor), 0, 0).find("submission") ==
        std::string::npos);
}

TEST_CASE("summary: the gaps between a graph launch's dependent nodes are stated") {
  Report report = program();
  // A serial graph launch of two 100 us nodes that took 210 us, 10 us of it between them.
  Row parent = graph_launch_row(2, 210e-6);
  parent.counters = {{quantity::kGpuTime, 210e-6}, {quantity::kGraphIdle, 10e-6}};
  report.rows.push_back(parent);
  for (int i = 0; i < 2; ++i) report.rows.push_back(kernel_node_row(i));
  const Summary summary = summarize(report, GroupBy::kFunctor);
  CHECK(summary.graph_seconds == doctest::Approx(210e-6));
  CHECK(summary.graph_idle_seconds == doctest::Approx(10e-6));
  CHECK(
      render_summary(summary, 0, 0)
          .find(
              "2 of the launches are nodes of 1 CUDA graph launch, each node in its own row; the "
              "graph launches themselves are not counted again. They took 210 µs, of which 10.0 µs "
              "(4.8%) ran none of their nodes: the gaps between dependent nodes") !=
      std::string::npos);
  CHECK(graph_gap_advice(summary).empty());  // 4.8%: under the 5% advised
  // 30 of 230 us between the nodes: the gaps' lever, bounded by the launches without them.
  report.rows[4].counters = {{quantity::kGpuTime, 230e-6}, {quantity::kGraphIdle, 30e-6}};
  const Summary gapped = summarize(report, GroupBy::kFunctor);
  CHECK(graph_gap_advice(gapped) ==
        "latency: 30.0 µs of the graph launches' 230 µs (13.0%) ran none of their nodes, the GPU "
        "waiting between dependent nodes; fewer nodes (fuse the short ones), or programmatic "
        "dependent launch between them so that a node starts while its predecessor ends; these "
        "launches up to ×1.15");
  const std::string text = render_summary(gapped, 0, 0);
  CHECK(text.find("What to try next") != std::string::npos);
  CHECK(
      text.find("  the 1 CUDA graph launch (the time between their nodes)\n    latency: 30.0 µs") !=
      std::string::npos);
  // A report recorded before graph_idle_seconds existed says nothing of gaps.
  report.rows[4].counters.erase(quantity::kGraphIdle);
  CHECK(render_summary(summarize(report, GroupBy::kFunctor), 0, 0).find("gaps") ==
        std::string::npos);
}

TEST_CASE("summary: a group whose nodes shared the GPU says so, with their replays alone") {
  Report report = program();
  // Two kernel nodes of one launch on parallel branches, each beside the other for 50 of its
  // 100 us, each replayed alone in 70 us; a third node shared 2 us (under the 5% noted).
  for (int i = 0; i < 3; ++i) {
    Row node = kernel_node_row(i);
    node.counters[quantity::kGraphShared] = i < 2 ? 50e-6 : 2e-6;
    node.counters[quantity::kReplayTime] = 70e-6;
    report.rows.push_back(node);
  }
  const Summary summary = summarize(report, GroupBy::kFunctor);
  const KernelGroup* add = nullptr;
  const KernelGroup* gelu = nullptr;
  for (const KernelGroup& g : summary.groups)
    (g.key.find("CUDAFunctor_add") != std::string::npos ? add : gelu) = &g;
  REQUIRE(add != nullptr);
  REQUIRE(gelu != nullptr);
  CHECK(add->launches == 4);
  CHECK(add->shared_seconds == doctest::Approx(102e-6));
  CHECK(add->shared_replayed == 2);
  CHECK(add->shared_graph_seconds == doctest::Approx(200e-6));
  CHECK(add->shared_alone_seconds == doctest::Approx(140e-6));
  CHECK(shared_note(*add) ==
        "ran beside other nodes of its graph launches for 102 µs (26% of its time): its rates, "
        "and the bounds above, are those of a shared GPU; replayed alone, its 2 nodes that "
        "shared more than 5% of their time took 140 µs, against 200 µs in the graph");
  CHECK(shared_note(*gelu).empty());
}

TEST_CASE("summary: a compiled model's graphs, recorded on the H200, summarised by kernel") {
  // torch.compile(mode="reduce-overhead") of a two-layer GPT block: 7 graph launches whose
  // nodes are rows of their own (two launches of one kernel with one shape in one graph among
  // them: the report reads, no row is a duplicate).
  const Report report =
      read_report_file(std::string(ROOFLINE_GRAPH_REPORTS_DIR) + "/gpt_timed.json");
  const Summary summary = summarize(report, GroupBy::kFunctor);
  CHECK(summary.graph_launches == 7);
  CHECK(summary.graph_node_rows == 252);
  CHECK(summary.busy_seconds > 0);
  CHECK(summary.busy_seconds <= summary.interval_seconds * 1.000001);
  for (const KernelGroup& g : summary.groups) CHECK(g.key.find("graph") == std::string::npos);
  std::size_t nodes = 0, named = 0;
  for (const Row& row : report.rows)
    if (row.launch && row.launch->is_graph_node()) {
      ++nodes;
      named += !row.kernel.empty() && row.kernel != "CUDA graph";
    }
  CHECK(nodes == 252);
  CHECK(named == nodes);
}

TEST_CASE("summary: a compiled model's counted graph nodes are judged on their own roofs") {
  // profile --graph-nodes counted of the GPT block on the H200: every kernel node has the
  // counters of its replay, so cuBLAS's GEMM nodes land on the wgmma roof, not on a blend.
  const Report report =
      read_report_file(std::string(ROOFLINE_COUNTED_GRAPH_REPORTS_DIR) + "/gpt_counted.json");
  std::size_t counted = 0;
  for (const Row& row : report.rows)
    if (row.launch && row.launch->is_graph_node() && row.launch->node_kind == "kernel") {
      CAPTURE(row.kernel);
      CHECK(row.status == RowStatus::kOk);
      CHECK(row.counters.at(quantity::kL2) > 0);
      counted += 1;
    }
  CHECK(counted == 226);
  const Summary summary = summarize(report, GroupBy::kFunctor);
  CHECK(summary.graph_node_rows == 252);
  bool gemm = false;
  for (const KernelGroup& g : summary.groups) {
    CHECK(g.key.find("graph") == std::string::npos);
    if (g.key.rfind("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_bias", 0) == 0) {
      gemm = true;
      CHECK(g.binding == "tensor FP16 (wgmma)");
      CHECK(g.fraction_of_bound > 0.5);
      CHECK(g.fraction_of_bound < 1.0);
    }
  }
  CHECK(gemm);
  // The chart counts each node once: no point for the graph launches that hold them.
  const std::vector<JudgedReport> judged = {JudgedReport(report)};  // the chart points in
  const Chart chart = build_chart(judged, {});
  CHECK(std::find(chart.kernels.begin(), chart.kernels.end(), "CUDA graph") == chart.kernels.end());
  CHECK(chart.kernels.size() > 10);
}

TEST_CASE("show: a saved report prints the same rows as the command that wrote it") {
  for (const char* name : {"head.json", "base.json", "head_a100.json", "head_low_clock.json",
                           "head_improved.json", "model.json"}) {
    CAPTURE(name);
    const std::string file = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/" + name;
    const CliResult r = cli({"show", file});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out == render_table(read_report_file(file), {}));  // run, model: the table alone
  }
  const std::string path = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/head.json";
  const CliResult both = cli({"show", path, "--view", "both"});
  CHECK(both.out.find("Where the time goes") == 0);
  // profile and merge reports: their tables as the writers render them.
  for (const char* name : {"report_launches.json", "report_merged.json"}) {
    CAPTURE(name);
    const std::string file = std::string(ROOFLINE_TEST_DATA_DIR) + "/golden/" + name;
    const CliResult r = cli({"show", file, "--view", "table"});
    REQUIRE(r.code == 0);
    CHECK(r.out == render_table(read_report_file(file), {}));
  }
  // A compare document: its rows in compare's order, with compare's verdicts.
  const std::string compare = std::string(ROOFLINE_TEST_DATA_DIR) + "/golden/compare_head.json";
  const CliResult rows = cli({"show", compare});
  REQUIRE(rows.code == 0);
  const nlohmann::json document = nlohmann::json::parse(read_text(compare));
  std::size_t at = 0;
  for (const nlohmann::json& row : document.at("rows")) {
    const std::string verdict = row.at("verdict").get<std::string>();
    const std::string kernel = row.at("kernel_head").get<std::string>();
    const std::size_t found = rows.out.find(kernel, at);
    REQUIRE(found != std::string::npos);
    const std::size_t end = rows.out.find('\n', found);
    CHECK(rows.out.substr(found, end - found).find(verdict) != std::string::npos);
    at = end;
  }
  CHECK(cli({"show", compare, "--csv", "-"}).code == 2);  // no report rows to write
}

TEST_CASE("show: profiled rows get the summary, filters and bad input") {
  TempDir dir;
  const std::string path = (dir.path / "profile.json").string();
  write_text(path, render_json(program()));
  const CliResult r = cli({"show", path, "--top", "5"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Where the time goes: 4 launches") == 0);
  CHECK(r.out.find("[GeluCUDAKernelImpl]") != std::string::npos);
  const CliResult only_add = cli({"show", path, "--kernel-regex", "add", "--view", "summary"});
  CHECK(only_add.out.find("1 launches") != std::string::npos);
  const CliResult none = cli({"show", path, "--kernel-regex", "nothing-matches"});
  CHECK(none.code == 2);
  CHECK(none.err.find("no row matches --kernel-regex") != std::string::npos);
  const CliResult bad = cli({"show", path, "--kernel-regex", "("});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("not a valid regular expression") != std::string::npos);  // as profile
  // The chosen rows written out again, read back whole.
  const std::string out = (dir.path / "gelu.json").string();
  REQUIRE(cli({"show", path, "--kernel-regex", "Gelu", "--json", out}).code == 0);
  CHECK(read_report_file(out).rows.size() == 3);
  CHECK(cli({"show", path, "--json", path}).code == 2);  // never over its input
}

TEST_CASE("show: --markdown writes the summary and the advice as Markdown") {
  TempDir dir;
  const std::string path = (dir.path / "profile.json").string();
  write_text(path, render_json(program()));
  const std::string md = (dir.path / "summary.md").string();
  const CliResult r = cli({"show", path, "--markdown", md});
  REQUIRE(r.code == 0);
  const std::string text = read_text(md);
  CHECK(text.find("### Where the time goes: ") == 0);
  CHECK(text.find(
            "| time % | total | launches | median | bound by | of roof | try next | kernel |") !=
        std::string::npos);
  // Markdown's own characters in kernel names are escaped: the table keeps its columns.
  CHECK(text.find("vectorized\\_elementwise\\_kernel") != std::string::npos);
  // The same on stdout; two outputs on stdout are refused.
  CHECK(cli({"show", path, "--markdown", "-"}).out == text);
  const CliResult both = cli({"show", path, "--markdown", "-", "--csv", "-"});
  CHECK(both.code == 2);
  CHECK(both.err.find("name the same output") != std::string::npos);
}

TEST_CASE("summary: the shipped profile of a compiled GPT block shows without a GPU") {
  // tests/data/reports/h200_gpt_block_profile.json, docs/profiling.md's example.
  const std::string file =
      std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/h200_gpt_block_profile.json";
  const CliResult r = cli({"show", file, "--view", "summary", "--top", "8"});
  CHECK(r.code == 0);
  CHECK(r.out.find("Where the time goes: 356 launches") != std::string::npos);
  CHECK(r.out.find("58 of the launches are nodes of 2 CUDA graph launches") != std::string::npos);
  CHECK(r.out.find("What to try next") != std::string::npos);
  // No group is an opaque graph: no row of the table ends in a kernel called "graph".
  CHECK(r.out.find("  graph\n") == std::string::npos);
}

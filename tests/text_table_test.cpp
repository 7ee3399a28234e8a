// TextTable: the narrowed column's cuts keep distinct names distinct.
#include "render/text_table.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> first_cells(const std::string& table, size_t width) {
  std::vector<std::string> out;
  std::istringstream in(table);
  std::string line;
  for (int n = 0; std::getline(in, line); ++n)
    if (n >= 2) out.push_back(line.substr(0, width));
  return out;
}

TEST(TextTable, CutsInTheMiddleToFitTheWidth) {
  mlprof::TextTable t;
  t.add_column("name", mlprof::TextTable::Align::kLeft);
  t.add_column("time");
  std::string name(40, 'a');
  name += std::string(40, 'b');
  t.add_row({name, "1 ms"});
  std::string out = t.render(40);
  // 40 columns: "  1 ms" leaves 34 for the name, 15 + "..." + 16.
  EXPECT_NE(out.find(std::string(15, 'a') + "..." + std::string(16, 'b') + "  1 ms"),
            std::string::npos)
      << out;
  EXPECT_EQ(t.render_uncut().find("..."), std::string::npos);
}

TEST(TextTable, NamesThatDifferOnlyInTheMiddleStayDistinct) {
  // Two kernels of one template, as PyTorch traces name them: same head, same tail.
  const std::string head = "void at::native::vectorized_elementwise_kernel<4, at::native::";
  const std::string tail = ", at::detail::Array<char*, 3> >(int, at::detail::Array<char*, 3>)";
  mlprof::TextTable t;
  t.add_column("kernel", mlprof::TextTable::Align::kLeft);
  t.add_column("time");
  t.add_row({head + "CUDAFunctor_add<float>" + tail, "5 ms"});
  t.add_row({head + "BinaryFunctor<float, float, float, MulFunctor<float> >" + tail, "4 ms"});
  t.add_row({head + "CUDAFunctor_add<float>" + tail, "3 ms"});  // the same kernel again
  t.add_row({"volta_sgemm_64x64_tn", "2 ms"});
  std::string out = t.render(60);
  std::vector<std::string> cells = first_cells(out, 52);
  ASSERT_EQ(cells.size(), 4u) << out;
  EXPECT_NE(cells[0], cells[1]) << out;
  EXPECT_EQ(cells[0], cells[2]) << "the same name reads the same";
  EXPECT_NE(cells[0].find("CUDAFunctor"), std::string::npos) << out;
  EXPECT_NE(cells[1].find("BinaryFunctor"), std::string::npos) << out;
  for (const std::string& line : first_cells(out, std::string::npos))
    EXPECT_LE(line.size(), 60u) << line;
}

TEST(TextTable, MinCutWidthKeepsNamesReadableBesideManyColumns) {
  // An op table with thread-time columns: at width 40 the name would be cut to the default 12
  // ("Some...Slice"); with a minimum of 20 it stays whole and the table is wider instead.
  mlprof::TextTable t;
  t.add_column("op", mlprof::TextTable::Align::kLeft);
  for (const char* h : {"total", "self", "mean", "cpu", "cpu/wall"}) t.add_column(h);
  t.add_row({"SomeOtherSlice", "997.0 us", "997.0 us", "997.0 us", "996.0 us", "99.9%"});
  t.add_row({"aten::_foreach_copy_", "1.0 ms", "1.0 ms", "1.0 ms", "1.0 ms", "99.0%"});
  EXPECT_NE(t.render(40).find("Some...Slice"), std::string::npos);
  t.set_min_cut_width(20);
  std::string out = t.render(40);
  EXPECT_NE(out.find("SomeOtherSlice  "), std::string::npos) << out;
  EXPECT_NE(out.find("aten::_foreach_copy_  "), std::string::npos) << out;
  t.add_row({std::string(30, 'a') + std::string(30, 'b'), "1 ms", "1 ms", "1 ms", "1 ms", "1%"});
  out = t.render(40);  // longer names are still cut, to the minimum
  EXPECT_NE(out.find(std::string(8, 'a') + "..." + std::string(9, 'b') + "  "), std::string::npos)
      << out;
}

}  // namespace

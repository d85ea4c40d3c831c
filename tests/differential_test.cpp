#include <gtest/gtest.h>
TEST(Differential, Placeholder) {}

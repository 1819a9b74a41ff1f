// shapes.cpp - a C++ target for the symbolizer's demangling.
//
// usage: shapes [SECONDS]
//   Runs for SECONDS (default 1), then exits 0.  Most of the time goes to
//   geo::detail::Klass::method(int); the rest to an overloaded function
//   (geo::scale(int) and geo::scale(double)), a function template
//   instantiated twice (geo::accumulate<int> and <double>) and a virtual
//   method (geo::Square::area).  Every one is noinline, so each keeps a
//   symbol of its own whose mangled name (_ZN3geo...) differs from what a
//   reader wants to see.
//
// The Makefile builds only C workloads: the unit tests compile this file
// with g++ -O2 -g at test time.
#include <chrono>
#include <cstdint>
#include <cstdlib>

#define KEEP __attribute__((noinline, noclone))

static volatile uint64_t sink;

namespace geo {

namespace detail {

class Klass {
  public:
    explicit Klass(uint64_t seed) : state_(seed | 1)
    {
    }
    KEEP uint64_t method(int rounds);

  private:
    uint64_t state_;
};

uint64_t Klass::method(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        state_ ^= state_ >> 27;
        state_ *= 0x94d049bb133111ebULL;
        __asm__ volatile("" : "+r"(state_));
    }
    return state_;
}

} // namespace detail

KEEP int scale(int v)
{
    __asm__ volatile("" : "+r"(v));
    return v * 3;
}

KEEP double scale(double v)
{
    __asm__ volatile("" : "+x"(v));
    return v * 2.5;
}

template <typename T> KEEP T accumulate(const T *values, int n)
{
    T sum = T();
    for (int i = 0; i < n; i++)
        sum += values[i];
    __asm__ volatile("" ::: "memory");
    return sum;
}

class Shape {
  public:
    virtual ~Shape() = default;
    virtual double area(int scale) const = 0;
};

class Square : public Shape {
  public:
    explicit Square(double side) : side_(side)
    {
    }
    KEEP double area(int scale) const override;

  private:
    double side_;
};

double Square::area(int scale) const
{
    return side_ * side_ * scale;
}

} // namespace geo

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    auto end = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(seconds));
    geo::detail::Klass k(42);
    geo::Square sq(1.5);
    // Through a volatile pointer, so the call stays virtual.
    const geo::Shape *volatile shape = &sq;
    int ints[16];
    double doubles[16];
    for (int i = 0; i < 16; i++) {
        ints[i] = i;
        doubles[i] = i * 0.5;
    }
    uint64_t acc = 0;
    do {
        acc += k.method(20000);
        acc += (uint64_t)geo::scale((int)acc) + (uint64_t)geo::scale((double)(acc & 0xff));
        acc += (uint64_t)geo::accumulate(ints, 16) + (uint64_t)geo::accumulate(doubles, 16);
        acc += (uint64_t)shape->area((int)(acc & 7));
    } while (std::chrono::steady_clock::now() < end);
    sink = acc;
    return 0;
}

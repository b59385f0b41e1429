// The scenario of scripts/simgrid-compare.sh in SimGrid's C++ API (Debian's libsimgrid-dev).
//
// N hosts of 1 flop/s, each executing K tasks one after another, each task an exponential
// number of flops with mean 1 (an exponential service time of mean 1 s): N*K task
// completions. No communication, no balancing.
//
// Usage: simgrid_equivalent N K SEED
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <simgrid/s4u.hpp>
#include <string>

namespace sg4 = simgrid::s4u;

static void worker(int tasks, unsigned long seed)
{
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> exp1(1.0);
  for (int i = 0; i < tasks; i++)
    sg4::this_actor::execute(exp1(rng));
}

int main(int argc, char** argv)
{
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s N K SEED\n", argv[0]);
    return 2;
  }
  int n = std::atoi(argv[1]);
  int k = std::atoi(argv[2]);
  unsigned long seed = std::strtoul(argv[3], nullptr, 10);
  int sg_argc = 2;
  char arg0[] = "simgrid";
  char arg1[] = "--log=root.thres:critical";
  char* sg_argv[] = {arg0, arg1, nullptr};
  sg4::Engine e(&sg_argc, sg_argv);
  auto* zone = sg4::create_star_zone("zone");
  std::vector<sg4::Host*> hosts;
  for (int i = 0; i < n; i++)
    hosts.push_back(zone->create_host("h" + std::to_string(i), 1.0));
  zone->seal();
  for (int i = 0; i < n; i++)
    sg4::Actor::create("w" + std::to_string(i), hosts[i], worker, k, seed * 1000003UL + i);
  auto start = std::chrono::steady_clock::now();
  e.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long events = (long)n * k;
  std::printf("simgrid-c++ hosts=%d tasks=%ld sim_time=%.3f wall=%.3f events_per_second=%.0f\n", n, events,
              sg4::Engine::get_clock(), wall, events / wall);
  return 0;
}

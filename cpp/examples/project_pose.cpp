// Project poses onto the joint limits of a limits file written by jointlimits, without Python:
// what an engine or a DCC plugin embeds.
//
//   g++ -O2 -std=c++17 -I cpp/include cpp/examples/project_pose.cpp -o project_pose
//   ./project_pose limits.json < poses.txt > limited.txt [--soften FALLOFF RADIUS]
//
// poses.txt: one pose per line, J local rotations as 4*J numbers (w x y z per joint, joints in the
// skeleton's order). Each output line is the limited pose, numbers printed round-trip exactly.
#include <jointlimits/limits_file.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2 && !(argc == 5 && std::string(argv[2]) == "--soften")) {
        std::fprintf(stderr, "usage: %s LIMITS.json [--soften FALLOFF RADIUS] < poses.txt\n", argv[0]);
        return 2;
    }
    jointlimits::LimitsFile lf;
    try {
        lf = jointlimits::read_limits_file(argv[1]);
    } catch (const jointlimits::LimitsFileError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    const bool soften = argc == 5;
    const double falloff = soften ? std::strtod(argv[3], nullptr) : 0.0;
    const double radius = soften ? std::strtod(argv[4], nullptr) : 0.0;
    const std::size_t width = 4 * lf.names.size();

    std::vector<double> pose;
    std::string line;
    std::size_t lineno = 0;
    while (std::getline(std::cin, line)) {
        ++lineno;
        std::istringstream in(line);
        pose.clear();
        double x;
        while (in >> x) pose.push_back(x);
        if (pose.empty()) continue;
        if (pose.size() != width) {
            std::fprintf(stderr, "error: line %zu has %zu numbers, expected %zu (4 per joint)\n", lineno, pose.size(), width);
            return 2;
        }
        if (!lf.limits.project(pose.data(), 1, soften, falloff, radius, pose.data())) {
            std::fprintf(stderr, "error: line %zu holds a non-finite value\n", lineno);
            return 2;
        }
        for (std::size_t i = 0; i < width; ++i) std::printf(i ? " %.17g" : "%.17g", pose[i]);
        std::printf("\n");
    }
    return 0;
}

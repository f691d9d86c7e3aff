// llama_load reads importance matrices with llama.cpp's own loader, the function llama-quantize
// calls (common_imatrix_load, exported by the libllama-common.so of the node-llama-cpp 3.22.1 npm
// package), and prints what it read as JSON, for TestLlamaCppLoadsOurs -llama-loaded:
//
//   {"files": [{"file": "...", "ok": true, "is_legacy": false, "has_metadata": true,
//               "chunk_count": 3, "chunk_size": 512, "datasets": ["..."],
//               "entries": {"blk.0.attn_q.weight": {"sums": [...], "counts": [...]}, ...}}, ...]}
//
// Build and run (.ci/run does):
//
//   LIB=$TCAST_LLAMA_JS/@node-llama-cpp/linux-x64/bins/linux-x64
//   g++ -std=c++17 -O1 -o llama_load llama_load.cpp -L$LIB -l:libllama-common.so -Wl,-rpath,$LIB
//   ./llama_load FILE... > loaded.json
//
// The two structures below restate the loader's interface (the types and order of its members),
// which the call needs to lay out its result; nothing else of llama.cpp is used.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

struct common_imatrix_entry {
    std::vector<float> sums;
    std::vector<int64_t> counts;
};

struct common_imatrix {
    std::map<std::string, common_imatrix_entry> entries;
    std::vector<std::string> datasets;
    int32_t chunk_count = 0;
    int32_t chunk_size = 0;
    bool is_legacy = false;
    bool has_metadata = false;
};

bool common_imatrix_load(const std::string & fname, common_imatrix & imatrix);

// json_string prints s as a JSON string (names and datasets are printable ASCII in the tests;
// other bytes are escaped).
static void json_string(const std::string & s) {
    putchar('"');
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20 || c >= 0x7f) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

int main(int argc, char ** argv) {
    printf("{\"files\": [");
    for (int i = 1; i < argc; i++) {
        common_imatrix m;
        bool ok = common_imatrix_load(argv[i], m);
        printf("%s\n{\"file\": ", i > 1 ? "," : "");
        json_string(argv[i]);
        printf(", \"ok\": %s, \"is_legacy\": %s, \"has_metadata\": %s, \"chunk_count\": %d, \"chunk_size\": %d",
               ok ? "true" : "false", m.is_legacy ? "true" : "false", m.has_metadata ? "true" : "false",
               m.chunk_count, m.chunk_size);
        printf(", \"datasets\": [");
        for (size_t j = 0; j < m.datasets.size(); j++) {
            printf("%s", j ? ", " : "");
            json_string(m.datasets[j]);
        }
        printf("], \"entries\": {");
        bool first = true;
        for (const auto & [name, e] : m.entries) {
            printf("%s\n  ", first ? "" : ",");
            first = false;
            json_string(name);
            printf(": {\"sums\": [");
            for (size_t j = 0; j < e.sums.size(); j++) {
                printf("%s%.9g", j ? ", " : "", e.sums[j]);
            }
            printf("], \"counts\": [");
            for (size_t j = 0; j < e.counts.size(); j++) {
                printf("%s%lld", j ? ", " : "", (long long) e.counts[j]);
            }
            printf("]}");
        }
        printf("}}");
    }
    printf("]}\n");
    return 0;
}

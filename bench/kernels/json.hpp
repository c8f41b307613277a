// imghist-bench — a minimal JSON writer (objects, arrays, strings, numbers, booleans, null).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

class Json {
public:
    Json& begin_object(const char* key = nullptr) { open(key, '{'); return *this; }
    Json& end_object() { close('}'); return *this; }
    Json& begin_array(const char* key = nullptr) { open(key, '['); return *this; }
    Json& end_array() { close(']'); return *this; }

    Json& kv(const char* key, const std::string& v) { item(key); str(v); return *this; }
    Json& kv(const char* key, const char* v) { item(key); if (v) str(v); else out_ += "null"; return *this; }
    Json& kv(const char* key, double v) { item(key); num(v); return *this; }
    Json& kv(const char* key, int v) { item(key); out_ += std::to_string(v); return *this; }
    Json& kv(const char* key, long long v) { item(key); out_ += std::to_string(v); return *this; }
    Json& kv(const char* key, unsigned long long v) { item(key); out_ += std::to_string(v); return *this; }
    Json& kv(const char* key, bool v) { item(key); out_ += v ? "true" : "false"; return *this; }
    Json& null(const char* key) { item(key); out_ += "null"; return *this; }

    const std::string& str() const { return out_; }

private:
    std::string out_;
    std::vector<bool> first_;  // per open container: no member written yet

    void indent() { out_ += '\n'; out_.append(2 * first_.size(), ' '); }
    void item(const char* key) {
        if (!first_.empty()) {
            if (!first_.back()) out_ += ',';
            first_.back() = false;
            indent();
        }
        if (key) { str(key); out_ += ": "; }
    }
    void open(const char* key, char c) { item(key); out_ += c; first_.push_back(true); }
    void close(char c) {
        const bool empty = first_.back();
        first_.pop_back();
        if (!empty) indent();
        out_ += c;
    }
    void num(double v) {
        if (!std::isfinite(v)) { out_ += "null"; return; }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.6g", v);
        out_ += buf;
    }
    void str(const std::string& s) {
        out_ += '"';
        for (unsigned char ch : s) {
            switch (ch) {
                case '"': out_ += "\\\""; break;
                case '\\': out_ += "\\\\"; break;
                case '\n': out_ += "\\n"; break;
                case '\t': out_ += "\\t"; break;
                default:
                    if (ch < 0x20) {
                        char buf[8];
                        std::snprintf(buf, sizeof buf, "\\u%04x", ch);
                        out_ += buf;
                    } else {
                        out_ += static_cast<char>(ch);
                    }
            }
        }
        out_ += '"';
    }
};

}  // namespace bench

// SVG renderers: the stacked budget bar and sweep curves. Hand-written SVG 1.1, no dependencies.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trainmem/render.h"
#include "util/units.h"

namespace trainmem {
namespace {

constexpr std::array<const char*, kTenantCount> kColours = {
    "#4e79a7",  // weights
    "#f28e2b",  // gradients
    "#e15759",  // optimizer states
    "#76b7b2",  // master weights
    "#59a14f",  // activations
    "#edc948",  // logits
    "#b07aa1",  // temporaries
    "#9c755f",  // overhead
};
constexpr std::array<char, kTenantCount> kLetters = {'W', 'G', 'O', 'M', 'A', 'L', 'T', 'X'};

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string header(int w, int h, std::string_view title) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"13\">\n"
      "<title>{2}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
      w, h, escape(title));
}

std::string text(double x, double y, std::string_view s, std::string_view extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>\n", x, y,
                     extra.empty() ? "" : " ", extra, escape(s));
}

// A "nice" tick step (1, 2, 5 x 10^k) giving about `n` ticks over `range`.
double nice_step(double range, int n) {
  if (range <= 0) return 1;
  const double raw = range / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

std::string fmt_tick(double v) {
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string render_svg_budget(const Ledger& ledger, const Fit* fit, const RenderOptions& o) {
  const Totals t = totals(ledger);
  const auto live = live_at_slot(ledger, t.peak_slot);
  const int w = 860;
  const int h = 266;
  const double x0 = 30;
  const double x1 = w - 30;
  const double bar_y = 84;
  const double bar_h = 46;
  const std::int64_t scale_bytes =
      std::max<std::int64_t>(1, fit ? std::max(fit->capacity_bytes, t.peak_bytes) : t.peak_bytes);
  const auto xpos = [&](std::int64_t bytes) {
    return x0 + (x1 - x0) * static_cast<double>(bytes) / static_cast<double>(scale_bytes);
  };
  const std::string title = fmt::format("Memory budget per GPU: {}", ledger.model.name);
  std::string out = header(w, h, title);
  out += text(x0, 26, title, "font-size=\"16\" font-weight=\"bold\"");
  out += text(x0, 48,
              fmt::format("peak {} ({}) at {}", format_bytes(t.peak_bytes, o.unit),
                          gb_and_gib(t.peak_bytes), slot_name(t.peak_slot)),
              "fill=\"#333333\"");
  if (fit) {
    const std::string verdict =
        fit->fits ? fmt::format("fits {}: {} free of {} usable", fit->device.name,
                                format_bytes(fit->margin_bytes, o.unit),
                                format_bytes(fit->usable_bytes, o.unit))
                  : fmt::format("does not fit {}: over by {} ({} usable)", fit->device.name,
                                format_bytes(-fit->margin_bytes, o.unit),
                                format_bytes(fit->usable_bytes, o.unit));
    out += text(x0, 66, verdict,
                fit->fits ? (fit->tight ? "fill=\"#b9770e\"" : "fill=\"#1e8449\"")
                          : "fill=\"#c0392b\" font-weight=\"bold\"");
  }
  // Background: the device's capacity, with the reserve shaded at the end.
  if (fit) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#f0f0f0\" "
        "stroke=\"#999999\"/>\n",
        x0, bar_y, xpos(fit->capacity_bytes) - x0, bar_h);
    out += text(xpos(fit->capacity_bytes), bar_y - 5,
                fmt::format("capacity {}", gb_and_gib(fit->capacity_bytes)),
                "text-anchor=\"end\" fill=\"#777777\" font-size=\"11\"");
    if (fit->reserve_bytes > 0) {
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#d0d0d0\">"
          "<title>reserved {}</title></rect>\n",
          xpos(fit->usable_bytes), bar_y, xpos(fit->capacity_bytes) - xpos(fit->usable_bytes),
          bar_h, escape(format_bytes(fit->reserve_bytes, o.unit)));
    }
  }
  // The tenants, stacked.
  std::int64_t at = 0;
  for (int k = 0; k < kTenantCount; ++k) {
    const std::int64_t b = live[static_cast<std::size_t>(k)];
    if (b <= 0) continue;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "stroke=\"#ffffff\" stroke-width=\"0.5\"><title>{}: {}</title></rect>\n",
        xpos(at), bar_y, std::max(0.5, xpos(at + b) - xpos(at)), bar_h,
        kColours[static_cast<std::size_t>(k)], escape(tenant_title(static_cast<Tenant>(k))),
        escape(format_bytes(b, o.unit)));
    at += b;
  }
  if (fit) {
    const double ux = xpos(fit->usable_bytes);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#c0392b\" "
        "stroke-width=\"2\" stroke-dasharray=\"5,3\"/>\n",
        ux, bar_y, bar_y + bar_h + 8);
    const std::string label = fmt::format("usable {}", gb_and_gib(fit->usable_bytes));
    const bool right = ux > (x0 + x1) / 2;
    out += text(right ? ux - 4 : ux + 4, bar_y + bar_h + 22, label,
                right ? "text-anchor=\"end\" fill=\"#c0392b\"" : "fill=\"#c0392b\"");
  }
  // Legend.
  double lx = x0;
  double ly = bar_y + bar_h + 50;
  for (int k = 0; k < kTenantCount; ++k) {
    const std::int64_t b = live[static_cast<std::size_t>(k)];
    if (b <= 0) continue;
    const std::string label =
        fmt::format("{} {}", tenant_title(static_cast<Tenant>(k)), format_bytes(b, o.unit));
    const double lw = 22 + 7.2 * static_cast<double>(label.size());
    if (lx + lw > x1) {
      lx = x0;
      ly += 22;
    }
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n",
                       lx, ly - 11, kColours[static_cast<std::size_t>(k)]);
    out += text(lx + 17, ly, label);
    lx += lw + 10;
  }
  out += "</svg>\n";
  return out;
}

std::string render_svg_sweep(const Sweep& s, const RenderOptions& o) {
  const int w = 860;
  const int h = 500;
  const double px0 = 80, px1 = w - 40, py0 = 70, py1 = h - 70;  // plot area
  const Unit unit = o.unit == Unit::bytes ? Unit::gib : o.unit;
  const std::string axis =
      s.axis == SweepAxis::batch ? "micro-batch (sequences)" : "sequence length (tokens)";
  const std::string title =
      fmt::format("{}: peak memory against {}", s.model,
                  s.axis == SweepAxis::batch ? "micro-batch" : "sequence length");
  std::string out = header(w, h, title);
  out += text(px0, 28, title, "font-size=\"16\" font-weight=\"bold\"");
  out += text(px0, 48,
              fmt::format("{} {}, {}, {} {}", s.axis == SweepAxis::batch ? "seq" : "batch",
                          s.axis == SweepAxis::batch ? s.plan.seq : s.plan.batch,
                          name_of(s.plan.method), "checkpointing", name_of(s.plan.checkpointing)),
              "fill=\"#555555\"");
  if (s.points.empty()) {
    out += text(px0, py0 + 40, "no points");
    out += "</svg>\n";
    return out;
  }
  double xmin = static_cast<double>(s.points.front().x);
  double xmax = static_cast<double>(s.points.back().x);
  if (xmax <= xmin) xmax = xmin + 1;
  double ymax = 0;
  // With a device, each point's verdict is judged on its Fit figure: on a CUDA card the device
  // total (allocator reserve + CUDA context), drawn as a curve of its own with the verdict dots.
  const auto judged = [](const SweepPoint& p) { return p.fit ? p.fit->peak_bytes : p.peak_bytes; };
  const bool judged_curve = std::any_of(s.points.begin(), s.points.end(), [](const SweepPoint& p) {
    return p.fit && p.fit->peak_bytes != p.peak_bytes;
  });
  for (const SweepPoint& p : s.points) {
    ymax = std::max({ymax, in_unit(p.peak_bytes, unit), in_unit(judged(p), unit)});
  }
  const double usable = s.device ? in_unit(s.device->usable_bytes(), unit) : 0;
  const double capacity = s.device ? in_unit(s.device->capacity_bytes, unit) : 0;
  ymax = std::max({ymax, capacity, 1e-9}) * 1.08;
  const double ystep = nice_step(ymax, 6);
  ymax = std::ceil(ymax / ystep) * ystep;
  const auto X = [&](double v) { return px0 + (px1 - px0) * (v - xmin) / (xmax - xmin); };
  const auto Y = [&](double v) { return py1 - (py1 - py0) * v / ymax; };

  // Grid and axes.
  for (double v = 0; v <= ymax + 1e-9; v += ystep) {
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e5e5e5\"/>\n", px0,
        Y(v), px1, Y(v));
    out += text(px0 - 8, Y(v) + 4, fmt_tick(v), "text-anchor=\"end\" fill=\"#444444\"");
  }
  const double xstep = std::max(1.0, nice_step(xmax - xmin, 8));
  for (double v = std::ceil(xmin / xstep) * xstep; v <= xmax + 1e-9; v += xstep) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#999999\"/>\n",
        X(v), py1, py1 + 5);
    out += text(X(v), py1 + 20, fmt_tick(v), "text-anchor=\"middle\" fill=\"#444444\"");
  }
  out += fmt::format(
      "<path d=\"M {:.1f} {:.1f} L {:.1f} {:.1f} L {:.1f} {:.1f}\" fill=\"none\" "
      "stroke=\"#333333\"/>\n",
      px0, py0, px0, py1, px1, py1);
  out += text((px0 + px1) / 2, py1 + 44, axis, "text-anchor=\"middle\"");
  out += fmt::format(
      "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 {0:.1f} {1:.1f})\">peak memory ({2})</text>\n",
      px0 - 52, (py0 + py1) / 2, unit_name(unit));

  // The device's limit.
  if (s.device) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#c0392b\" "
        "stroke-width=\"2\" stroke-dasharray=\"6,4\"/>\n",
        px0, Y(usable), px1);
    out += text(px1 - 4, std::min(Y(usable), Y(capacity)) - 6,
                fmt::format("{}: {} usable of {}", s.device->id,
                            format_bytes(s.device->usable_bytes(), unit),
                            format_bytes(s.device->capacity_bytes, unit)),
                "text-anchor=\"end\" fill=\"#c0392b\"");
    if (capacity > usable) {
      out += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#999999\" "
          "stroke-dasharray=\"2,3\"/>\n",
          px0, Y(capacity), px1);
    }
  }
  // Curves: static state and peak.
  std::string stat_pts, peak_pts, judged_pts;
  for (const SweepPoint& p : s.points) {
    const double x = X(static_cast<double>(p.x));
    stat_pts += fmt::format("{:.1f},{:.1f} ", x, Y(in_unit(p.static_bytes, unit)));
    peak_pts += fmt::format("{:.1f},{:.1f} ", x, Y(in_unit(p.peak_bytes, unit)));
    judged_pts += fmt::format("{:.1f},{:.1f} ", x, Y(in_unit(judged(p), unit)));
  }
  if (judged_curve) {
    out += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#e15759\" stroke-width=\"2\" "
        "stroke-dasharray=\"2,3\"/>\n",
        judged_pts);
  }
  out += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#888888\" stroke-width=\"2\" "
      "stroke-dasharray=\"8,4\"/>\n",
      stat_pts);
  out += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2.5\"/>\n",
      peak_pts);
  for (const SweepPoint& p : s.points) {
    // The verdict estimate gives (on a CUDA card, the device total against usable memory), not
    // the plotted live peak against the line.
    const bool over = p.fit ? !p.fit->fits : s.device && p.peak_bytes > s.device->usable_bytes();
    const std::string figure = p.fit ? p.fit->figure : "peak";
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{} {}: {} {}"
        "</title></circle>\n",
        X(static_cast<double>(p.x)), Y(in_unit(judged(p), unit)), over ? "#c0392b" : "#4e79a7",
        name_of(s.axis), p.x, escape(figure), escape(format_bytes(judged(p), unit)));
  }
  // Legend.
  const double ly = py0 - 8;
  out += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#4e79a7\" "
      "stroke-width=\"2.5\"/>\n",
      px0 + 10, ly, px0 + 34, ly);
  out += text(px0 + 40, ly + 4, "peak");
  out += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888888\" "
      "stroke-width=\"2\" stroke-dasharray=\"8,4\"/>\n",
      px0 + 90, ly, px0 + 114, ly);
  out += text(px0 + 120, ly + 4, "static state (weights, grads, optimizer)");
  if (judged_curve) {
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e15759\" "
        "stroke-width=\"2\" stroke-dasharray=\"2,3\"/>\n",
        px0 + 400, ly, px0 + 424, ly);
    const auto with_fit = std::find_if(s.points.begin(), s.points.end(),
                                       [](const SweepPoint& p) { return p.fit.has_value(); });
    out += text(px0 + 430, ly + 4, with_fit->fit->figure + " (the verdict's figure)");
  }
  out += "</svg>\n";
  return out;
}

std::string render_svg_sweep_pair(const Sweep& left, const Sweep& right, const RenderOptions& o) {
  // Each panel is a complete SVG; nested <svg> elements place them side by side.
  const auto body = [](std::string panel) {
    const std::size_t start = panel.find("<svg");
    return panel.substr(start);
  };
  std::string l = body(render_svg_sweep(left, o));
  std::string r = body(render_svg_sweep(right, o));
  l.insert(4, " x=\"0\" y=\"0\"");
  r.insert(4, " x=\"860\" y=\"0\"");
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1720\" height=\"500\" "
      "viewBox=\"0 0 1720 500\">\n<title>{}: peak memory against {} and against {}</title>\n"
      "{}{}</svg>\n",
      escape(left.model), name_of(left.axis), name_of(right.axis), l, r);
}

std::string render_text_stacked_bar(const Ledger& ledger, const Fit* fit, int width) {
  const Totals t = totals(ledger);
  const auto live = live_at_slot(ledger, t.peak_slot);
  const std::int64_t scale =
      std::max<std::int64_t>(1, fit ? std::max(fit->capacity_bytes, t.peak_bytes) : t.peak_bytes);
  const auto cells = [&](std::int64_t bytes) {
    return static_cast<int>(
        std::llround(static_cast<double>(bytes) * width / static_cast<double>(scale)));
  };
  std::string bar;
  std::int64_t at = 0;
  for (int k = 0; k < kTenantCount; ++k) {
    const std::int64_t b = live[static_cast<std::size_t>(k)];
    if (b <= 0) continue;
    const int n = cells(at + b) - cells(at);
    bar.append(static_cast<std::size_t>(std::max(0, n)), kLetters[static_cast<std::size_t>(k)]);
    at += b;
  }
  if (fit) {
    const int usable = std::max(0, cells(fit->usable_bytes));
    const int capacity = std::max(0, cells(fit->capacity_bytes));
    while (static_cast<int>(bar.size()) < usable) bar += '.';
    while (static_cast<int>(bar.size()) < capacity) bar += '#';
    // Mark the usable limit, over whatever is drawn there.
    const std::size_t mark = static_cast<std::size_t>(std::min(usable, width));
    if (mark >= bar.size()) {
      bar += '|';
    } else {
      bar.insert(mark, 1, '|');
    }
  }
  std::string legend;
  for (int k = 0; k < kTenantCount; ++k) {
    if (live[static_cast<std::size_t>(k)] <= 0) continue;
    legend +=
        fmt::format("{}{}={}", legend.empty() ? "" : " ", kLetters[static_cast<std::size_t>(k)],
                    tenant_name(static_cast<Tenant>(k)));
  }
  if (fit) legend += " .=free |=usable limit #=reserved";
  return "[" + bar + "]\n  " + legend;
}

}  // namespace trainmem

// Package history turns an ordered series of results files (the default branch's runs, oldest
// commit first) into trends: one series per cell-metric over commits, its sustained shifts found
// by package compare/changepoint, and renderings of both: a text table and an SVG chart
// (gonum/plot). Package history/pages lays them out as a static site with the latest matrix.
//
// It must not read or write files, nor decide which runs belong together: the caller passes the
// results of one configuration in commit order (the results store's index, or `speedmatrix
// history --dir`, which orders a folder by run start). It does no statistics of its own beyond
// collecting the values, and must not import package report (history/pages does).
//
// # API
//
//	h, err := history.Analyze(files, history.DefaultOptions())  // every cell and metric
//	s := h.Find(cell, metric)                                    // one series and its shifts
//	history.WriteText(w, s)                                      // the series as a table
//	svg, err := s.SVG(8*vg.Inch, 3*vg.Inch)                      // its chart
//	site, err := pages.Site(h)                                   // "index.html" and "charts/*.svg"
//
// # Values
//
// A point is one results file's summary value of the cell-metric (the median over trials the
// runner writes), in the profile's time for a run of the simulator at a speedup (rates ÷ speedup,
// times × speedup, as reports show them). A file that lacks the cell or did not measure it (over
// capacity, error) gives a point without a value: it is listed and charted as a gap, and the
// change-point search runs over the points with values only. Several files of one commit are
// several points. The metric's δ (compare.DefaultThresholds: 3 % throughput, 5 % latency) is the
// minimum change reported, and its direction says which shifts are regressions.
package history

#!/usr/bin/Rscript
# gantt.R STATES.tsv LEGEND.tsv OUT.png TITLE - a Gantt chart of thread states with a legend, as a PNG.
#
# STATES.tsv: thread<TAB>start<TAB>end<TAB>state, times in seconds (from pj_dump of ptt-paje's output);
# LEGEND.tsv: state<TAB>"R G B" (the state types of ptt-paje's header, in the state model's order).
# Written by examples/picture.sh; see README.md.
suppressPackageStartupMessages(library(ggplot2))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4)
	stop("usage: gantt.R STATES.tsv LEGEND.tsv OUT.png TITLE", call. = FALSE)
st <- read.delim(args[1], header = FALSE, quote = "", col.names = c("thread", "start", "end", "state"),
		 colClasses = c("character", "numeric", "numeric", "character"))
lg <- read.delim(args[2], header = FALSE, quote = "", col.names = c("state", "rgb"), colClasses = "character")
rgb3 <- sapply(strsplit(lg$rgb, " "), function(v) { v <- as.numeric(v); rgb(v[1], v[2], v[3]) })
colours <- setNames(rgb3, lg$state)
t0 <- min(st$start)
st$start <- (st$start - t0) * 1000
st$end <- (st$end - t0) * 1000
# threads top to bottom in the order they began; the legend lists only the states drawn, in the model's order
first <- tapply(st$start, st$thread, min)
st$thread <- factor(st$thread, levels = rev(names(sort(first))))
st$state <- factor(st$state, levels = lg$state[lg$state %in% st$state])
st$y <- as.integer(st$thread)
p <- ggplot(st) +
	geom_rect(aes(xmin = start, xmax = end, ymin = y - 0.4, ymax = y + 0.4, fill = state)) +
	scale_fill_manual(values = colours, name = NULL, drop = TRUE) +
	scale_y_continuous(breaks = seq_along(levels(st$thread)), labels = levels(st$thread), expand = c(0.02, 0.02)) +
	scale_x_continuous(expand = c(0.005, 0)) +
	labs(title = args[4], subtitle = "one row per thread (tid and name), coloured by what it was doing: running, waiting or holding a lock",
	     x = "milliseconds from the first thread event", y = NULL) +
	theme_minimal(base_size = 12) +
	theme(legend.position = "bottom", panel.grid.major.y = element_blank(), panel.grid.minor = element_blank(),
	      plot.title = element_text(size = 13), plot.subtitle = element_text(size = 10, colour = "grey30"), axis.text.y = element_text(size = 11)) +
	guides(fill = guide_legend(nrow = 1, override.aes = list(colour = NA)))
ggsave(args[3], p, width = 11, height = 1.6 + 0.45 * nlevels(st$thread), dpi = 120, bg = "white")

#!/usr/bin/Rscript
# flame.R FRAMES.tsv OUT.png TITLE UNIT - a flame graph of waiting (or holding) time, as a PNG.
# Run by ptt-picture(1) --flame.
#
# FRAMES.tsv: depth<TAB>start<TAB>end<TAB>frame<TAB>use, one rectangle a frame of the folded stacks
# of ptt-stat --folded (depth 1 the outermost frame, start and end in nanoseconds summed over the
# stacks sorted by name, as flamegraph.pl lays them out); the leaf frames are the objects,
# "[KIND OBJECT]", their use "lock" (contention), "work" (waiting for work) or "held".  Of the critical
# path (ptt-critical --folded): "[held OBJECT]" held, "[waited OBJECT]" lock, "[running, no lock]" run,
# the rest (start-up, own waits, unknown) other.
# UNIT: what the time is ("waited", "waited for locks", "held", "on the critical path"), for the subtitle.
suppressPackageStartupMessages(library(ggplot2))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4)
	stop("usage: flame.R FRAMES.tsv OUT.png TITLE UNIT", call. = FALSE)
fr <- read.delim(args[1], header = FALSE, quote = "", comment.char = "", na.strings = NULL,
		 col.names = c("depth", "start", "end", "frame", "use"),
		 colClasses = c("integer", "numeric", "numeric", "character", "character"))
total <- max(fr$end)
width_px <- 1600
dpi <- 120
row_px <- 17
depth <- max(fr$depth)
height_px <- min(200 + (depth + 1) * row_px, 6000)

# colours: the program's frames in flamegraph.pl's warm hues, a hue a name (the same frame, the same
# colour); the objects (leaves) by use: locks red, waiting for work blue, held purple
hash <- function(s) sapply(s, function(x) { v <- utf8ToInt(x); sum(v * seq_along(v)) %% 1000 / 1000 })
h <- hash(fr$frame)
fr$fill <- rgb(0.8 + 0.2 * h, 0.35 + 0.5 * (1 - h), 0.2 * h)
fr$fill[fr$use == "lock"] <- "#c0392b"
fr$fill[fr$use == "work"] <- "#5d8aa8"
fr$fill[fr$use == "held"] <- "#8e44ad"
fr$fill[fr$use == "run"] <- "#1f78b4"
fr$fill[fr$use == "other"] <- "grey70"
critical <- any(fr$use %in% c("run", "other"))

# labels where the rectangle is wide enough: about 7 pixels a character at this size
px <- (fr$end - fr$start) / total * (width_px - 40)
chars <- floor(px / 6.5) - 1
fr$label <- ifelse(chars >= 3, ifelse(nchar(fr$frame) > chars, paste0(substr(fr$frame, 1, pmax(chars - 2, 1)), ".."), fr$frame), "")

ms <- total / 1e6
p <- ggplot(fr) +
	geom_rect(aes(xmin = start, xmax = end, ymin = depth - 1, ymax = depth - 0.05), fill = fr$fill, colour = NA) +
	geom_text(aes(x = start + (end - start) / 2, y = depth - 0.52, label = label), size = 2.6, family = "mono") +
	scale_x_continuous(expand = c(0.004, 0), labels = function(x) sprintf("%g ms", x / 1e6)) +
	scale_y_continuous(expand = c(0, 0.1), breaks = NULL) +
	labs(title = args[3], subtitle = if (critical)
		sprintf(paste0("%.3f ms %s (ptt-critical), by the stack of each hold or wait along it; outermost frame at the bottom\n",
			       "purple: holding a lock, red: waiting for a hand-off, blue: running outside locks, ",
			       "grey: thread start-up, own waits and unknown"), ms, args[4]) else
		sprintf("%.3f ms %s in all, summed over threads; outermost frame at the bottom, the object on top%s",
			ms, args[4], if (any(fr$use == "work")) " (red: locks, blue: waiting for work)" else ""), x = NULL, y = NULL) +
	theme_minimal(base_size = 10) + theme(panel.grid = element_blank(), plot.subtitle = element_text(size = 8))
ggsave(args[2], p, width = width_px / dpi, height = height_px / dpi, dpi = dpi, limitsize = FALSE)

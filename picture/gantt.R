#!/usr/bin/Rscript
# gantt.R STATES.tsv LEGEND.tsv OUT.png TITLE [NAMES.csv [GROUP [MAX_HEIGHT [list [PATH.tsv]]]]] -
# a Gantt chart of thread states with a legend, as a PNG.  Run by ptt-picture(1).
#
# STATES.tsv: thread<TAB>start<TAB>end<TAB>state, times in seconds (from pj_dump of ptt-paje's output);
# LEGEND.tsv: state<TAB>"R G B" (the state types of ptt-paje's header, in the state model's order);
# NAMES.csv: ptt-csv's events of the threads (tid and thread_name columns): the names as they are,
# where Paje's have '#', quotes and control characters replaced;
# GROUP: name (rows grouped by thread name, digits as N), none, or auto (name above 40 threads);
# MAX_HEIGHT: the picture's height at most, in pixels (default 2400);
# list: also print the rows top to bottom on stdout, "GROUP<TAB>LABEL" (GROUP empty when not grouped),
# then the critical path's stretches drawn, "critical<TAB>START<TAB>END<TAB>LABEL" (ms);
# PATH.tsv: the critical path, thread<TAB>start<TAB>end (a stretch on the thread's row, seconds, in time
# order: each entered from the one before), from ptt-paje --critical; an empty file: no path drawn.
suppressPackageStartupMessages(library(ggplot2))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 4 || length(args) > 9)
	stop("usage: gantt.R STATES.tsv LEGEND.tsv OUT.png TITLE [NAMES.csv [GROUP [MAX_HEIGHT [list [PATH.tsv]]]]]", call. = FALSE)
group <- if (length(args) >= 6) args[6] else "auto"
max_height <- if (length(args) >= 7) as.numeric(args[7]) else 2400
dpi <- 120
st <- read.delim(args[1], header = FALSE, quote = "", comment.char = "", col.names = c("thread", "start", "end", "state"),
		 colClasses = c("character", "numeric", "numeric", "character"))
lg <- read.delim(args[2], header = FALSE, quote = "", comment.char = "", col.names = c("state", "rgb"), colClasses = "character")
rgb3 <- sapply(strsplit(lg$rgb, " "), function(v) { v <- as.numeric(v); rgb(v[1], v[2], v[3]) })
colours <- setNames(rgb3, lg$state)

# each row's label: "TID NAME" with the name as the trace has it (the last one the thread took)
tid <- sub(" .*", "", st$thread)
label <- setNames(unique(st$thread), unique(st$thread))
bare <- setNames(sub("^[0-9]+ ?", "", names(label)), names(label))
began <- character(0)
if (length(args) >= 5 && file.exists(args[5]) && file.info(args[5])$size > 0) {
	nm <- tryCatch(read.csv(args[5], colClasses = "character", na.strings = NULL, comment.char = ""), error = function(e) NULL)
	if (!is.null(nm) && all(c("tid", "thread_name") %in% names(nm))) {
		began <- unique(nm$tid) # the threads in the order of their first event in the trace
		nm <- nm[nm$thread_name != "", ]
		last <- tapply(nm$thread_name, nm$tid, function(v) v[length(v)])
		for (k in names(label)) {
			t <- sub(" .*", "", k)
			if (!is.na(last[t])) {
				label[k] <- paste(t, last[t])
				bare[k] <- last[t]
			}
		}
	}
}
t0 <- min(st$start)
st$start <- (st$start - t0) * 1000
st$end <- (st$end - t0) * 1000
first <- tapply(st$start, st$thread, min)
# ties (pj_dump's times are to the microsecond: threads that began within one) go in the trace's order,
# known from NAMES.csv; without it, by tid
tie <- match(sub(" .*", "", names(first)), began)
tie[is.na(tie)] <- length(began) + as.numeric(sub(" .*", "", names(first)))[is.na(tie)]
nthreads <- length(first)
grouped <- group == "name" || (group == "auto" && nthreads > 40)
# a group: the thread's name with its numbers as N ("worker-3" and "worker-12": "worker-N")
gkey <- ifelse(bare == "", "(no name)", gsub("[0-9]+", "N", bare))
# rows top to bottom: groups in the order their first thread began, threads in the order they began
gfirst <- tapply(first[names(gkey)], gkey, min)
ord <- if (grouped) order(gfirst[gkey[names(first)]], first, tie) else order(first, tie)
rows <- names(first)[ord]
st$row <- factor(st$thread, levels = rev(rows))
st$y <- as.integer(st$row)
st$state <- factor(st$state, levels = lg$state[lg$state %in% st$state])
nstates <- nlevels(st$state)
lab <- unname(label[levels(st$row)])
listing <- length(args) >= 8 && args[8] == "list"
if (listing)
	writeLines(paste(if (grouped) gkey[rows] else "", label[rows], sep = "\t"))
if (grouped) { # a panel per group, named with its count of threads
	counts <- table(gkey[rows])
	st$group <- factor(gkey[st$thread], levels = unique(gkey[rows]))
	levels(st$group) <- paste0(levels(st$group), "\n(", counts[levels(st$group)], ")")
}

# The critical path: its stretches on the threads' rows (cp), drawn as a line along the middle of each
# row, the states inside them (hl) in full colour over the rest faded, and its hand-offs (ho) from row to
# row at the time of each (arrows when there are few enough to see; grouped, only within a panel)
cp <- NULL
if (length(args) >= 9 && file.exists(args[9]) && file.info(args[9])$size > 0)
	cp <- read.delim(args[9], header = FALSE, quote = "", comment.char = "", col.names = c("thread", "start", "end"),
			 colClasses = c("character", "numeric", "numeric"))
if (!is.null(cp)) {
	path_ms <- sum(cp$end - cp$start) * 1000
	cp$start <- (cp$start - t0) * 1000
	cp$end <- (cp$end - t0) * 1000
	cp$y <- match(cp$thread, levels(st$row))
	n <- nrow(cp)
	ho <- data.frame(t = cp$start[-1], y0 = cp$y[-n], y1 = cp$y[-1], from = cp$thread[-n], to = cp$thread[-1])
	cp <- cp[!is.na(cp$y), ]
	ho <- ho[!is.na(ho$y0) & !is.na(ho$y1) & ho$y0 != ho$y1, ]
	if (grouped) {
		cp$group <- st$group[match(cp$thread, st$thread)]
		ho$group <- st$group[match(ho$from, st$thread)]
		ho <- ho[ho$group == st$group[match(ho$to, st$thread)], ]
	}
	if (listing)
		writeLines(sprintf("critical\t%.3f\t%.3f\t%s", cp$start, cp$end, label[cp$thread]))
	# each state clipped to the stretches of its thread it overlaps (a thread's stretches never overlap)
	hl <- do.call(rbind, lapply(split(cp, cp$thread), function(c) {
		c <- c[order(c$start), ]
		s <- st[st$thread == c$thread[1], ]
		i1 <- pmax(findInterval(s$start, c$start), 1)
		n <- pmax(findInterval(s$end, c$start) - i1 + 1, 0)
		h <- s[rep(seq_len(nrow(s)), n), ]
		seg <- sequence(n[n > 0], from = i1[n > 0])
		h$start <- pmax(h$start, c$start[seg])
		h$end <- pmin(h$end, c$end[seg])
		h[h$start < h$end, ]
	}))
}
show_labels <- length(rows) <= 60
p <- ggplot(st) +
	geom_rect(aes(xmin = start, xmax = end, ymin = y - 0.4, ymax = y + 0.4, fill = state), alpha = if (is.null(cp)) 1 else 0.25)
if (!is.null(cp)) {
	p <- p + geom_rect(data = hl, aes(xmin = start, xmax = end, ymin = y - 0.4, ymax = y + 0.4, fill = state)) +
		geom_segment(data = cp, aes(x = start, xend = end, y = y, yend = y), colour = "black", linewidth = 0.7)
	if (nrow(ho) > 0)
		p <- p + geom_segment(data = ho, aes(x = t, xend = t, y = y0, yend = y1), colour = "black", linewidth = 0.4,
				      arrow = if (nrow(ho) <= 60) arrow(length = unit(5, "pt"), type = "closed") else NULL)
}
p <- p +
	scale_fill_manual(values = colours, name = NULL, drop = TRUE) +
	scale_x_continuous(expand = c(0.005, 0)) +
	labs(title = args[4],
	     subtitle = if (!is.null(cp))
			sprintf(paste0("the critical path (ptt-critical), %.3f ms: the threads' states along it in full colour, ",
				       "the rest faded;\nthe black line runs along it, from thread to thread at each hand-off%s"), path_ms,
				if (grouped) " (within a group of threads)" else "") else
			paste0(if (grouped) "threads grouped by name (numbers as N), one thin row each" else
			       "one row per thread (tid and name)",
			       ", coloured by what it was doing: running, waiting or holding a lock"),
	     x = "milliseconds from the first thread event", y = NULL) +
	theme_minimal(base_size = 12) +
	theme(legend.position = "bottom", panel.grid.major.y = element_blank(), panel.grid.minor = element_blank(),
	      plot.margin = margin(6, 24, 6, 6), plot.title = element_text(size = 13), plot.subtitle = element_text(size = 10, colour = "grey30"),
	      axis.text.y = element_text(size = if (length(rows) > 30) 8 else 11)) +
	# the legend wraps: four states a line
	guides(fill = guide_legend(ncol = min(4, nstates), byrow = TRUE, override.aes = list(colour = NA)))
if (grouped) {
	p <- p + facet_grid(group ~ ., scales = "free_y", space = "free_y", switch = "y") +
		scale_y_continuous(breaks = if (show_labels) seq_along(lab) else NULL, labels = if (show_labels) lab else NULL,
				   expand = c(0, 0.6)) +
		theme(strip.text.y.left = element_text(angle = 0, hjust = 1, size = 10), strip.placement = "outside",
		      panel.spacing.y = unit(3, "pt"), panel.border = element_rect(colour = "grey85", fill = NA))
} else {
	p <- p + scale_y_continuous(breaks = seq_along(lab), labels = if (show_labels) lab else NULL, expand = c(0.02, 0.02))
}
# a row 0.45 inch high up to the cap, then thinner; the legend's lines and the groups' gaps on top
legend_in <- 0.3 * ceiling(nstates / 4)
height <- min(1.4 + legend_in + 0.45 * length(rows), max_height / dpi)
ggsave(args[3], p, width = 11, height = height, dpi = dpi, bg = "white", limitsize = FALSE)

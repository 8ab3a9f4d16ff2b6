/**
 * The scaling bench's charts: a log-log line chart per measure, one line per contender, drawn by
 * vega-lite (compiled to a vega spec), rendered to SVG by vega's headless renderer and rasterized
 * to PNG by resvg. No browser and no canvas build: all three are devDependencies, resvg ships its
 * binary inside its npm package. Imported only by the bench and its test, never by keel itself.
 */
import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import { compile } from "vega-lite";

/** One colour per contender, the same in every chart. */
const COLOURS = { keel: "#1f77b4", pi: "#ff7f0e", floor: "#7f7f7f" };

/**
 * @param {{title: string, xTitle: string, yTitle: string,
 *          points: {x: number, y: number, contender: string}[]}} chart
 * @param {{width?: number, height?: number, scale?: number}} [size]  the picture is width×height
 *        CSS pixels, rasterized at `scale` device pixels per CSS pixel
 * @returns {Promise<{png: Buffer, width: number, height: number, svg: string}>}
 */
export async function renderChart(chart, { width = 640, height = 400, scale = 2 } = {}) {
	const contenders = [...new Set(chart.points.map((p) => p.contender))];
	const spec = {
		$schema: "https://vega.github.io/schema/vega-lite/v6.json",
		width,
		height,
		autosize: { type: "fit", contains: "padding" },
		padding: 8,
		background: "white",
		title: { text: chart.title, fontSize: 14 },
		data: { values: chart.points },
		mark: { type: "line", point: { size: 40 }, strokeWidth: 2 },
		encoding: {
			x: {
				field: "x",
				type: "quantitative",
				title: chart.xTitle,
				scale: { type: "log", nice: false },
				axis: { format: "~s", labelFontSize: 11, titleFontSize: 12 },
			},
			y: {
				field: "y",
				type: "quantitative",
				title: chart.yTitle,
				scale: { type: "log" },
				axis: { format: "~g", labelFontSize: 11, titleFontSize: 12 },
			},
			color: {
				field: "contender",
				type: "nominal",
				title: null,
				scale: { domain: contenders, range: contenders.map((c) => COLOURS[c] ?? "#2ca02c") },
				legend: { orient: "top-left", labelFontSize: 12 },
			},
		},
		config: { font: "DejaVu Sans", view: { stroke: "#ccc" } },
	};
	const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
	try {
		const svg = await view.toSVG();
		const rendered = new Resvg(svg, {
			fitTo: { mode: "zoom", value: scale },
			font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
		}).render();
		return { png: rendered.asPng(), width: rendered.width, height: rendered.height, svg };
	} finally {
		view.finalize();
	}
}

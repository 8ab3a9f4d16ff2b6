/** Types of scaling-plot.mjs (plain JS, used by bench/scaling.mjs and its test). */
export interface ChartPoint {
	x: number;
	y: number;
	contender: string;
}

export interface Chart {
	title: string;
	xTitle: string;
	yTitle: string;
	points: ChartPoint[];
}

export declare function renderChart(
	chart: Chart,
	size?: { width?: number; height?: number; scale?: number },
): Promise<{ png: Buffer; width: number; height: number; svg: string }>;

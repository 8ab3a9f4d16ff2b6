import type { ResolveHook } from "node:module";
import type { Plugin } from "vite";

export const FRAMEWORK_PACKAGES: string[];
export const INSTALL_FRAMEWORKS: string;
export function installedFrom(dir: string): boolean;
export function frameworksInstalled(): boolean;
export function chartsInstalled(): boolean;
export function frameworksResolver(): Plugin;
export const resolve: ResolveHook;

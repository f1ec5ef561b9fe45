export async function writeReport(_s: string[], f: string, _r: string) { return { file: f, runs: 0, tasks: 0 }; }

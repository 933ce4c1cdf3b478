export declare const importLoader: string
export declare const testFileExtensions: string[]

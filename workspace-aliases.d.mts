export declare function workspaceAliases(): Record<string, string>;

-- Must never run: the sandbox's require cannot read files.
evil_ran = true
return { evil = true }

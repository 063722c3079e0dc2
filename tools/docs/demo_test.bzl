"""A stage's demo test that also checks the README's run of the demo."""

def demo_test(name, size = "small"):
    """demo_test.sh runs :demo, checks its lines, and checks that every line
    of the README's <!-- demo:begin --> block is one the demo still prints
    (tools/docs/demo_blocks.py). Arguments: the demo, the README, the tool.
    """
    native.sh_test(
        name = name,
        size = size,
        srcs = ["demo_test.sh"],
        args = [
            "$(location :demo)",
            "$(location README.md)",
            "$(location //tools/docs:demo_blocks.py)",
        ],
        data = [
            "README.md",
            ":demo",
            "//tools/docs:demo_blocks.py",
        ],
    )

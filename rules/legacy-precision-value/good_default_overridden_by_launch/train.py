import click
from lightning import Trainer


# "16" is a legacy value, but the only launch line passes --precision: the default never runs
@click.command()
@click.option("--precision", default="16")
def main(precision):
    Trainer(precision=precision).fit(build_model())


if __name__ == "__main__":
    main()

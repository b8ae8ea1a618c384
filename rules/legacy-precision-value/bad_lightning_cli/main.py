from lightning.pytorch.cli import LightningCLI


def cli_main():
    LightningCLI(parser_kwargs={"fit": {"default_config_files": ["configs/defaults.yaml"]}})


if __name__ == "__main__":
    cli_main()

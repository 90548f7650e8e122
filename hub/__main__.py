from hub.cli import main

main()
